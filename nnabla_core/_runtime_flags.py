"""Process-wide switches that nnabla exposes at the top level."""
from __future__ import annotations

FLAGS = {"prefer_cached_array": True, "global_recompute": False}


def prefer_cached_array(prefer):
    """Prefer the memory-pooled array class for new arrays (the CPU backend always pools)."""
    FLAGS["prefer_cached_array"] = bool(prefer)


def set_global_recompute(recompute):
    """Set the default ``recompute`` flag of new variables."""
    FLAGS["global_recompute"] = bool(recompute)
