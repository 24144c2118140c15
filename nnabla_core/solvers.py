"""``nnabla.solvers``: the solvers of nnabla, created in the current context.

Each solver is one entry of ``SPECS``: its arguments with nnabla's names and defaults,
the argument that is its learning rate, and how it treats weight decay. The public
functions (``S.Adam(alpha=0.001, ...)``) are built from that table with real
signatures in :mod:`nnabla.solver` (where nnabla defines them too) and re-exported here;
the update math lives in the backends' rule tables.

Notation in the docstrings: ``p`` parameter, ``g`` gradient, ``t`` the step count
of the parameter (1 on the first update), ``wd`` the weight-decay rate in force.
"""
from __future__ import annotations

from ._spec.solvers import SPECS, SolverSpec  # noqa: F401 - public here
from .solver import SOLVER_FUNCTIONS, Solver, SolverState, solver_api

__all__ = ["Solver", "SolverState", "solver_api", *SOLVER_FUNCTIONS]
globals().update(SOLVER_FUNCTIONS)
