"""``nnabla.solvers``: the solvers of nnabla, created in the current context.

Each solver is one entry of ``SPECS``: its arguments with nnabla's names and defaults,
the argument that is its learning rate, and how it treats weight decay. The public
functions (``S.Adam(alpha=0.001, ...)``) are built from that table with real
signatures; the update math lives in the backends' rule tables.

Notation in the docstrings: ``p`` parameter, ``g`` gradient, ``t`` the step count
of the parameter (1 on the first update), ``wd`` the weight-decay rate in force.
"""
from __future__ import annotations

import inspect
import numbers
import textwrap

from ._spec.solvers import SPECS, SolverSpec  # noqa: F401 - SolverSpec is public here
from .solver import Solver, SolverState, solver_api

__all__ = ["Solver", "SolverState", "solver_api"]


def _solver_doc(name, spec):
    rule = textwrap.fill(spec.doc, 88, initial_indent="    ", subsequent_indent="    ")
    args = "\n".join(f"        {arg} ({type(default).__name__}): default {default!r}."
                     for arg, default in spec.args)
    if spec.fused is True:
        rule += "\n\n    Weight decay is fused into the update (see Solver.weight_decay)."
    elif spec.fused:
        rule += f"\n\n    Weight decay is fused into the update when ``{spec.fused}`` is True."
    return (f"Create the {name} solver in the current context.\n\n{rule}\n\n"
            f"    Args:\n{args}\n\n    Returns:\n        ~nnabla.solver.Solver: the solver.\n")


def _check_arguments(name, spec, values):
    for arg, default in spec.args:
        value = values[arg]
        expected = bool if isinstance(default, bool) else numbers.Real
        if not isinstance(value, expected) and not (expected is bool and value in (0, 1)):
            raise TypeError(f"S.{name}: argument '{arg}' is of type {type(value).__name__}; "
                            f"expected {'bool' if expected is bool else 'a real number'}")


def _make_solver_function(name, spec):
    """Build ``S.<name>(**args)`` with nnabla's signature from ``spec``."""
    signature = inspect.Signature([
        inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        for arg, default in spec.args])

    def create(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        _check_arguments(name, spec, values)
        fused = values[spec.fused] if isinstance(spec.fused, str) else spec.fused
        return Solver(name, values, lr_name=spec.lr, fused_weight_decay=bool(fused),
                      default_weight_decay=values[spec.wd] if spec.wd else 0.0)

    create.__name__ = create.__qualname__ = name
    create.__module__ = __name__
    create.__signature__ = signature
    create.__doc__ = _solver_doc(name, spec)
    return create


for _name, _spec in SPECS.items():
    globals()[_name] = _make_solver_function(_name, _spec)
    __all__.append(_name)
del _name, _spec
