"""Every piece of process-wide mutable state of the core, in one place.

``STATE`` holds the switches (each has a public setter elsewhere); ``CACHES`` lists the
memo tables that depend on them or on the plugin registry, so one call empties them all.

- ``auto_forward``: functions run as they are created (``nn.auto_forward``).
- ``graph_version``: bumped by every structural change of any graph; execution plans
  built at another version are stale.
- ``strict_fallback``: a resolution crossing to another array family raises
  (``nnabla.ext_utils.set_strict_fallback``).
- ``global_recompute``: the default ``recompute`` flag of new variables.
- ``prefer_cached_array``: nnabla's switch; the cpu family always draws from its pool.
- ``default_context`` / ``context_stack``: the context outside any scope, and the
  scopes entered (``nn.set_default_context``, ``nn.context_scope``).
- ``local_grad``: ``nn.grad`` is building a function's backward (a composition's
  gradient): it differentiates w.r.t. the given input nodes only, not past them.
- ``clear_called_recorder``: the active ``nnabla.testing.clear_called_flag_recorder``
  (forward/backward record each function's clear flags), or None.

The other process-wide objects are the plugin registry (``nnabla.plugins.REGISTRY``), the
registered array families (``nnabla.array_family``), the parameter scope
(``nnabla.parameter``) and the random generators (``nnabla.random``).
"""
from __future__ import annotations

from . import _native_graph


class State:
    __slots__ = ("auto_forward", "graph_version", "strict_fallback", "global_recompute",
                 "prefer_cached_array", "default_context", "context_stack", "local_grad",
                 "clear_called_recorder")

    def __init__(self):
        self.auto_forward = False
        self.graph_version = 0
        self.strict_fallback = False
        self.global_recompute = False
        self.prefer_cached_array = True
        self.default_context = None       # set by nnabla.context
        self.context_stack = []
        self.local_grad = False
        self.clear_called_recorder = None


STATE = State()
CACHES = []         # dicts memoising work that the registry or the switches decide


class _Memo(dict):
    """A memo table. Emptying it also makes the F.* wrappers' call sites
    (``nnabla._native_graph.CallSite``) forget the runners they read from it."""

    __slots__ = ()

    def clear(self):
        super().clear()
        _native_graph.forget_call_sites()


def cache():
    """A new memo dict, emptied by :func:`clear_caches`."""
    table = _Memo()
    CACHES.append(table)
    return table


def clear_caches():
    """Empty every memo table (after the registry or a switch changed)."""
    for table in CACHES:
        table.clear()
