"""The boxed backend's solver rules: the CPU rules applied to the values inside the boxes."""
from __future__ import annotations

import numpy as np
from nnabla.solver_rule import GradOps, Rule
from nnabla_ext.cpu.solvers import GRAD_OPS, RULES

from . import Box


def _v(a):
    return a.value if isinstance(a, Box) else a


def _boxed_op(op):
    def run(xp, *arrays_and_scalars):
        return op(np, *[_v(a) for a in arrays_and_scalars])
    return run


def _boxed_update(update):
    def run(xp, p, g, state, t, hp):
        update(np, p.value, g.value, {k: v.value for k, v in state.items()}, t, hp)
    return run


BOXED_GRAD_OPS = GradOps(*[_boxed_op(op) for op in GRAD_OPS])
BOXED_RULES = {name: Rule(_boxed_update(r.update), r.states, r.optional_states, BOXED_GRAD_OPS)
               for name, r in RULES.items()}
