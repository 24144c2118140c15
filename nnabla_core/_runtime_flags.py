"""Process-wide switches that nnabla exposes at the top level."""
from __future__ import annotations

from ._state import STATE


def set_global_recompute(recompute):
    """Set the default ``recompute`` flag of new variables."""
    STATE.global_recompute = bool(recompute)
