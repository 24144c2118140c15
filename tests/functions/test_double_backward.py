"""nn.grad through the registered backward functions, for every Case that has one.

First order: the backward function's output equals the engine's backward.
Second order: the gradient of ``sum(r * dx)`` w.r.t. the inputs and ``dy``
matches central differences of that first-order quantity.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.testing.function_cases import ALL_CASES
from engine_harness import call, flatten, outputs_of, to_variables
from nnabla.backward_functions import registry
from nnabla._spec import SPECS

CASES = [c for c in ALL_CASES if c.grad and c.name in registry
         and "seed" not in SPECS[c.name].arg_names]


def _setup(case):
    arrays = case.make_inputs()
    xs = to_variables(arrays)
    leaves = [v for v in flatten(xs) if v is not None and v.need_grad]
    if case.grad_inputs is not None:
        flat = flatten(xs)
        leaves = [flat[i] for i in case.grad_inputs if flat[i] is not None]
    ys = outputs_of(call(case, xs))
    rng = np.random.RandomState(7)
    dys = [nn.Variable.from_numpy_array(np.float32(rng.randn(*y.shape)), need_grad=True)
           for y in ys]
    return xs, leaves, ys, dys


@pytest.mark.parametrize("case", CASES, ids=str)
def test_backward_function_matches_the_engine_backward(case):
    xs, leaves, ys, dys = _setup(case)
    grads = nn.grad(ys, leaves, grad_outputs=dys)
    live = [g for g in grads if g is not None]
    assert live, f"{case}: nn.grad gave no gradient for a differentiable case"
    F.sink(*live).forward()
    nn.forward_all(ys)
    for v in leaves:
        v.grad.zero()
    for y, dy in zip(ys, dys):
        y.backward(dy.d)
    for v, g in zip(leaves, grads):
        if g is not None:
            np.testing.assert_allclose(g.d, v.g, atol=case.grad_atol * 5, rtol=case.grad_rtol,
                                       err_msg=f"{case}")


@pytest.mark.parametrize("case", [c for c in CASES if c.second_order], ids=str)
def test_second_order_gradient_matches_central_differences(case):
    xs, leaves, ys, dys = _setup(case)
    grads = nn.grad(ys, leaves, grad_outputs=dys)
    rng = np.random.RandomState(11)
    terms = [F.sum(g * nn.Variable.from_numpy_array(np.float32(rng.randn(*g.shape))))
             for g in grads if g is not None]
    assert terms, f"{case}: nn.grad gave no gradient for a case with second_order set"
    objective = terms[0]
    for t in terms[1:]:
        objective = objective + t
    wrt = leaves + dys
    second = nn.grad([objective], wrt)
    targets = [(v, s) for v, s in zip(wrt, second) if s is not None]
    nn.forward_all([objective] + [s for _, s in targets])
    eps = 1e-2
    for v, s in targets:
        base = v.d.astype(np.float64).copy()
        numeric = np.zeros_like(base).reshape(-1)
        for j in range(base.size):
            for sign in (1, -1):
                pert = base.copy().reshape(-1)
                pert[j] += sign * eps
                v.d = pert.reshape(base.shape).astype(np.float32)
                objective.forward()
                numeric[j] += sign * float(objective.d) / (2 * eps)
        v.d = base.astype(np.float32)
        np.testing.assert_allclose(s.d.reshape(-1), numeric, atol=5e-2, rtol=5e-2,
                                   err_msg=f"{case}: second-order gradient")
