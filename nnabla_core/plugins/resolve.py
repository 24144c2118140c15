"""Kernel resolution: which backend runs a function in a context.

The first backend in the context's list that has a kernel for the function and
the type config, and whose kernel accepts the arguments, wins. Candidates are
memoised per (function, backend list), so a lookup costs one dict access.
"""
from __future__ import annotations

import logging

from ..array_family import family as _family
from ..array_family import register_family
from ..kernel import declines_some_arguments
from . import REGISTRY, parse_backend

logger = logging.getLogger("nnabla")
_memo = {}
_logged_fallbacks = set()
STRICT = [False]


class Binding:
    """The resolved kernel class with its :class:`~nnabla.array_family.ArrayFamily` and
    type config."""

    __slots__ = ("kernel", "family", "type_config", "backend", "checks_args")

    def __init__(self, kernel, family, type_config, backend):
        self.kernel = kernel
        self.family = family
        self.type_config = type_config
        self.backend = backend
        self.checks_args = declines_some_arguments(kernel)


def _candidates(type_name, backends):
    key = (type_name, backends, REGISTRY.version)
    found = _memo.get(key)
    if found is None:
        found = []
        for entry in backends:
            backend, type_config = parse_backend(entry)
            REGISTRY.activate(backend)
            for fam in REGISTRY.families.values():
                register_family(fam)
            table = REGISTRY.kernels.get((backend, type_config), {})
            if type_name in table:
                ext = REGISTRY.extensions[backend][0]
                found.append(Binding(table[type_name], _family(ext.family), type_config,
                                     backend))
        _memo[key] = found
    return found


def resolve(spec, args, ctx):
    """The :class:`Binding` for ``spec`` in ``ctx``; raises naming what would work."""
    backends = tuple(ctx.backend)
    candidates = _candidates(spec.name, backends)
    declined = []
    for binding in candidates:
        reason = binding.kernel.accepts(args) if binding.checks_args else None
        if reason is None:
            if binding is not candidates[0] or binding.backend != parse_backend(backends[0])[0]:
                _note_fallback(spec, binding, backends)
            return binding
        declined.append(f"{binding.backend}: {reason}")
    raise _no_kernel(spec, backends, declined)


def _note_fallback(spec, binding, backends):
    first = parse_backend(backends[0])[0]
    first_family = REGISTRY.extensions[first][0].family if first in REGISTRY.extensions else None
    if binding.family.name == first_family:
        return
    if STRICT[0]:
        raise NotImplementedError(f"{spec.api_name}: would fall back from '{backends[0]}' to "
                                  f"'{binding.backend}:{binding.type_config}' (strict mode)")
    key = (spec.name, backends)
    if key not in _logged_fallbacks:
        _logged_fallbacks.add(key)
        logger.info("%s: no kernel on %s; running on %s (arrays are synchronised)",
                    spec.api_name, backends[0], binding.backend)


def _no_kernel(spec, backends, declined):
    implemented = sorted(f"{b}:{tc}" for (b, tc), table in REGISTRY.kernels.items()
                         if spec.name in table)
    msg = (f"{spec.api_name}: no kernel for context backend={list(backends)}; "
           f"implemented by: {', '.join(implemented) or 'none'} "
           f"(installed: {', '.join(sorted(REGISTRY.extensions)) or 'none'})")
    if declined:
        msg += f"; declined: {'; '.join(declined)}"
    return NotImplementedError(msg)


def explain(spec, args, ctx):
    """A human-readable account of how ``spec`` resolves in ``ctx``."""
    lines = [f"{spec.api_name} in context backend={ctx.backend}:"]
    for entry in ctx.backend:
        backend, tc = parse_backend(entry)
        try:
            REGISTRY.activate(backend)
        except ValueError as e:
            lines.append(f"  {entry}: unavailable ({e})")
            continue
        table = REGISTRY.kernels.get((backend, tc), {})
        kernel = table.get(spec.name)
        if kernel is None:
            lines.append(f"  {entry}: no kernel")
            continue
        reason = kernel.accepts(args)
        lines.append(f"  {entry}: {kernel.__module__}.{kernel.__name__}"
                     + (f" declines: {reason}" if reason else " accepts"))
    return "\n".join(lines)


def family_of_context(ctx):
    """The :class:`~nnabla.array_family.ArrayFamily` of the first backend of ``ctx``."""
    backend, _ = parse_backend(ctx.backend[0])
    REGISTRY.activate(backend)
    for fam in REGISTRY.families.values():
        register_family(fam)
    return _family(REGISTRY.extensions[backend][0].family)


def solver_binding(type_name, ctx):
    """``(rule, family)``: solver ``type_name``'s update rule for ``ctx`` (see
    :func:`nnabla.plugins.solver_rule`) and the array family it updates arrays in."""
    from . import solver_rule
    rule = solver_rule(type_name, ctx)
    for entry in ctx.backend:
        backend, _ = parse_backend(entry)
        if REGISTRY.solver_rules.get(backend, {}).get(type_name) is rule:
            for fam in REGISTRY.families.values():
                register_family(fam)
            return rule, _family(REGISTRY.extensions[backend][0].family)
    raise AssertionError(f"S.{type_name}: the rule found is registered for no backend")
