"""The plugin system: discovery, registry and kernel resolution.

``REGISTRY`` is the single registry of this process; ``register(obj)`` adds a
plugin in-process (tests, notebooks).
"""
from __future__ import annotations

import logging

from .._state import STATE
from .hookspecs import hookimpl  # noqa: F401
from .manager import (  # noqa: F401
    ENTRY_POINT_GROUP,
    PLUGIN_API_VERSION,
    NnablaPluginWarning,
    PluginError,
    Registry,
)
from .types import ArrayFamily, CommunicatorSet, Extension, KernelSet, PluginInfo, SolverKernelSet  # noqa: F401

REGISTRY = Registry()
_logger = logging.getLogger("nnabla")
_logged_solver_fallbacks = set()


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
    """The update rule of solver ``type_name`` for the first backend of ``ctx`` that has one
    (see :func:`find_solver_rule`)."""
    return find_solver_rule(type_name, ctx)[0]


def installed_backends(backends):
    """``backends`` (context entries) without those no installed plugin provides, as
    ``(entry, backend)`` pairs, activated; nnabla passes over uninstalled backends. Raises
    the first one's ValueError (naming what to install) when none is installed."""
    found, missing = [], []
    for entry in backends:
        backend, _ = parse_backend(entry)
        try:
            REGISTRY.activate(backend)
        except ValueError as error:
            missing.append(error)
            continue
        found.append((entry, backend))
    if not found and missing:
        raise missing[0]
    return found


def find_solver_rule(type_name, ctx):
    """``(rule, backend)``: solver ``type_name``'s update rule for the first backend of
    ``ctx`` that has one, and that backend.

    A rule found only on a backend of another array family than the context's first is
    logged once at INFO, or raises in strict mode (``nnabla.ext_utils.set_strict_fallback``).

    Raises:
        NotImplementedError: no backend of ``ctx`` has the rule, or strict mode forbids the
            one found.
    """
    tried = []
    for _, backend in installed_backends(ctx.backend):
        rules = REGISTRY.solver_rules.get(backend, {})
        if type_name in rules:
            _note_solver_fallback(type_name, ctx.backend, backend)
            return rules[type_name], backend
        tried.append(backend)
    raise NotImplementedError(f"S.{type_name}: no update rule for context backend="
                              f"{ctx.backend}; searched {tried}")


def _note_solver_fallback(type_name, backends, backend):
    first = parse_backend(backends[0])[0]
    wanted = REGISTRY.extensions[first][0].family if first in REGISTRY.extensions else None
    found = REGISTRY.extensions[backend][0].family
    if wanted == found:
        return
    where = (f"backend '{first}' is not installed" if wanted is None else
             f"no update rule on '{backends[0]}' (array family '{wanted}')")
    what = f"S.{type_name}: {where}; the rule of '{backend}' (array family '{found}')"
    if STATE.strict_fallback:
        raise NotImplementedError(f"{what} would run instead (strict mode)")
    key = (type_name, tuple(backends))
    if key not in _logged_solver_fallbacks:
        _logged_solver_fallbacks.add(key)
        _logger.info("%s runs instead (arrays are converted)", what)
