"""Process-wide switches that nnabla exposes at the top level."""
from __future__ import annotations

from ._state import STATE


def prefer_cached_array(prefer):
    """Prefer the memory-pooled array class for new arrays (the CPU backend always pools)."""
    STATE.prefer_cached_array = bool(prefer)


def set_global_recompute(recompute):
    """Set the default ``recompute`` flag of new variables."""
    STATE.global_recompute = bool(recompute)
