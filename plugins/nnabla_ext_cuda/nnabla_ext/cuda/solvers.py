"""The CUDA backend's solver rules: the CPU plugin's ``xp`` rules, run on CuPy arrays."""
from __future__ import annotations

from nnabla_ext.cpu.solvers import GRAD_OPS, RULES as _CPU_RULES
from nnabla.solver_rule import Rule

RULES = {name: Rule(r.update, r.states, r.optional_states, GRAD_OPS)
         for name, r in _CPU_RULES.items()}
