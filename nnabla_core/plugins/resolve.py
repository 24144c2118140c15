"""Kernel resolution: which backend runs a function in a context.

The first backend in the context's list that has a kernel for the function and
the type config, and whose kernel accepts the arguments, wins. Candidates are
memoised per (function, backend list), so a lookup costs one dict access.
"""
from __future__ import annotations

import logging

from .._state import STATE, cache
from ..array_family import family as _family
from ..kernel import declines_some_arguments
from . import REGISTRY, installed_backends, parse_backend

logger = logging.getLogger("nnabla")
_memo = cache()
_logged_fallbacks = set()


class Binding:
    """The resolved kernel class with its :class:`~nnabla.array_family.ArrayFamily` and
    type config."""

    __slots__ = ("kernel", "family", "type_config", "backend", "device_id", "checks_args")

    def __init__(self, kernel, family, type_config, backend, device_id=""):
        self.kernel = kernel
        self.family = family
        self.type_config = type_config
        self.backend = backend
        self.device_id = device_id          # the context's device, given to each kernel
        self.checks_args = declines_some_arguments(kernel)


def _candidates(type_name, backends, device_id=""):
    """The bindings of ``type_name`` along the installed ones of ``backends`` (see
    :func:`nnabla.plugins.installed_backends`)."""
    key = (type_name, backends, device_id, REGISTRY.version)
    found = _memo.get(key)
    if found is None:
        found = []
        for entry, backend in installed_backends(backends):
            type_config = parse_backend(entry)[1]
            table = REGISTRY.kernels.get((backend, type_config), {})
            if type_name in table:
                ext = REGISTRY.extensions[backend][0]
                found.append(Binding(table[type_name], _family(ext.family).for_device(device_id),
                                     type_config, backend, device_id))
        _memo[key] = found
    return found


def resolve(spec, args, ctx):
    """The :class:`Binding` for ``spec`` in ``ctx``; raises naming what would work."""
    backends = tuple(ctx.backend)
    candidates = _candidates(spec.name, backends, ctx.device_id)
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
    if first not in REGISTRY.extensions:
        what = (f"{spec.api_name}: backend '{first}' is not installed; "
                f"'{binding.backend}:{binding.type_config}' (array family "
                f"'{binding.family.name}')")
    else:
        first_family = REGISTRY.extensions[first][0].family
        if binding.family.name == first_family:
            return
        what = (f"{spec.api_name}: no kernel on '{backends[0]}' (array family "
                f"'{first_family}'); '{binding.backend}:{binding.type_config}' (array family "
                f"'{binding.family.name}')")
    if STATE.strict_fallback:
        raise NotImplementedError(f"{what} would run instead (strict mode)")
    key = (spec.name, backends)
    if key not in _logged_fallbacks:
        _logged_fallbacks.add(key)
        logger.info("%s runs instead (arrays are synchronised)", what)


def _no_kernel(spec, backends, declined):
    implemented = sorted(f"{b}:{tc}" for (b, tc), table in REGISTRY.kernels.items()
                         if spec.name in table)
    msg = (f"{spec.api_name}: no kernel for context backend={list(backends)}; "
           f"implemented by: {', '.join(implemented) or 'none'} "
           f"(installed: {', '.join(sorted(REGISTRY.extensions)) or 'none'})")
    if declined:
        msg += f"; declined: {'; '.join(declined)}"
    broken = [f"{r.entry_point} ({r.status}: {r.reason})" for r in REGISTRY.records.values()
              if r.status in ("failed", "skipped")]
    if broken:
        msg += f"; plugins not loaded: {', '.join(broken)}"
    return NotImplementedError(msg)


def explain(spec, args, ctx):
    """How ``spec`` resolves in ``ctx``: one line per backend of the context.

    The first kernel that accepts ``args`` is marked ``-> selected``, with a note when it
    runs on another array family than the context's first backend (strict mode makes that
    an error). A kernel class without ``accepts`` accepts everything; an ``accepts`` that
    raises is reported, not raised.
    """
    lines = [f"{spec.api_name} in context backend={ctx.backend}:"]
    families, selected = [], None
    for entry in ctx.backend:
        backend, tc = parse_backend(entry)
        try:
            REGISTRY.activate(backend)
        except ValueError as e:
            lines.append(f"  {entry}: unavailable ({e})")
            families.append(None)
            continue
        families.append(REGISTRY.extensions[backend][0].family)
        kernel = REGISTRY.kernels.get((backend, tc), {}).get(spec.name)
        line, accepted = _explain_kernel(entry, kernel, args)
        if accepted and selected is None:
            selected = families[-1]
            line += " -> selected" + _explain_crossing(families[0], selected)
        lines.append(line)
    if None in families:
        lines.append("  the call raises ValueError: a backend of the context is unavailable")
    elif selected is None:
        lines.append("  the call raises NotImplementedError: no kernel accepts")
    return "\n".join(lines)


def _explain_kernel(entry, kernel, args):
    """``(line, accepted)`` for one backend's kernel in :func:`explain`."""
    if kernel is None:
        return f"  {entry}: no kernel", False
    name = f"{getattr(kernel, '__module__', '?')}.{getattr(kernel, '__qualname__', kernel)}"
    try:
        reason = kernel.accepts(args) if declines_some_arguments(kernel) else None
    except Exception as e:  # noqa: BLE001 - explain reports a plugin's bug, resolve raises it
        return f"  {entry}: {name} accepts() raised {type(e).__name__}: {e}", False
    return f"  {entry}: {name} " + (f"declines: {reason}" if reason is not None
                                    else "accepts"), reason is None


def _explain_crossing(first_family, family):
    if family == first_family:
        return ""
    note = f" (crosses from array family '{first_family}' to '{family}'"
    return note + ("; strict mode: raises NotImplementedError)" if STATE.strict_fallback
                   else "; arrays are synchronised)")


def family_of_context(ctx):
    """The :class:`~nnabla.array_family.ArrayFamily` of the first installed backend of
    ``ctx``."""
    _, backend = installed_backends(ctx.backend)[0]
    return _family(REGISTRY.extensions[backend][0].family)


def solver_binding(type_name, ctx):
    """``(rule, family)``: solver ``type_name``'s update rule for ``ctx`` (see
    :func:`nnabla.plugins.solver_rule`) and the array family it updates arrays in."""
    from . import find_solver_rule
    rule, backend = find_solver_rule(type_name, ctx)
    return rule, _family(REGISTRY.extensions[backend][0].family).for_device(ctx.device_id)


def communicator_factory(name, ctx):
    """``(factory, backend)``: the communicator ``name`` (``'MultiProcessDataParallel
    Communicator'``, ``'DataParallelCommunicator'``) of the first backend of ``ctx`` whose
    plugin registers one through the ``nnabla_communicators`` hook.

    A communicator found only on a backend of another array family than the context's first
    is logged once at INFO, or raises in strict mode, as for kernels.

    Raises:
        NotImplementedError: no backend of ``ctx`` registers ``name``; the message lists the
            backends that register communicators and the plugins that failed to load.
    """
    first_family = None
    for _, backend in installed_backends(ctx.backend):
        family_name = REGISTRY.extensions[backend][0].family
        first_family = family_name if first_family is None else first_family
        table = REGISTRY.communicators.get(backend, {})
        if name in table:
            if family_name != first_family:
                _note_communicator_fallback(name, ctx.backend, backend, first_family,
                                            family_name)
            return table[name], backend
    offered = {b: sorted(t) for b, t in sorted(REGISTRY.communicators.items()) if t}
    msg = (f"C.{name}: no communicator for context backend={list(ctx.backend)}; "
           f"registered communicators: {offered or 'none'} "
           f"(installed backends: {', '.join(sorted(REGISTRY.extensions)) or 'none'})")
    broken = [f"{r.entry_point} ({r.status}: {r.reason})" for r in REGISTRY.records.values()
              if r.status in ("failed", "skipped")]
    if broken:
        msg += f"; plugins not loaded: {', '.join(broken)}"
    raise NotImplementedError(msg)


def _note_communicator_fallback(name, backends, backend, wanted, found):
    what = (f"C.{name}: no communicator on '{backends[0]}' (array family '{wanted}'); "
            f"the one of '{backend}' (array family '{found}')")
    if STATE.strict_fallback:
        raise NotImplementedError(f"{what} would run instead (strict mode)")
    key = ("communicator", name, tuple(backends))
    if key not in _logged_fallbacks:
        _logged_fallbacks.add(key)
        logger.info("%s runs instead (arrays are synchronised)", what)
