"""The plugin system: discovery, registry and kernel resolution.

``REGISTRY`` is the single registry of this process; ``register(obj)`` adds a
plugin in-process (tests, notebooks).
"""
from __future__ import annotations

from .hookspecs import hookimpl  # noqa: F401
from .manager import (ENTRY_POINT_GROUP, PLUGIN_API_VERSION, NnablaPluginWarning,  # noqa: F401
                      PluginError, Registry)
from .types import (ArrayFamily, CommunicatorSet, Extension, KernelSet, PluginInfo,  # noqa: F401
                    SolverKernelSet)

REGISTRY = Registry()


def register(obj, name=None):
    """Register a plugin object in-process; returns its record."""
    record = REGISTRY.register(obj, name)
    REGISTRY.version += 1
    return record


def parse_backend(entry):
    """``'cpu:float'`` -> ``('cpu', 'float')``; a bare name means float."""
    name, _, type_config = entry.partition(":")
    return name, (type_config or "float")


def solver_rule(type_name, ctx):
    """The update rule of solver ``type_name`` for the first backend of ``ctx`` that has one."""
    tried = []
    for entry in ctx.backend:
        backend, _ = parse_backend(entry)
        REGISTRY.activate(backend)
        rules = REGISTRY.solver_rules.get(backend, {})
        if type_name in rules:
            return rules[type_name]
        tried.append(backend)
    raise NotImplementedError(f"S.{type_name}: no update rule for context backend="
                              f"{ctx.backend}; searched {tried}")
