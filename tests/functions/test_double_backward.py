"""nn.grad through the registered backward functions, for every Case that has one.

First order: the backward function's output equals the engine's backward (a consistency
check, at float32 precision). Second order, the correctness check: the gradient of
``sum(r * dx)`` w.r.t. the inputs and ``dy`` matches float64 central differences of the same
quantity computed by the float64 kernel (whose backward test_kernels.py checks at 1e-6).
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.testing.function_cases import ALL_CASES
from engine_harness import call, flatten, outputs_of, to_variables
from kernel_harness import make_kernel
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
            np.testing.assert_allclose(g.d, v.g, atol=1e-5, rtol=1e-4,
                                       err_msg=f"{case}")


def _leaf_positions(case, xs):
    flat = flatten(xs)
    if case.grad_inputs is not None:
        return [i for i in case.grad_inputs if flat[i] is not None]
    return [i for i, v in enumerate(flat) if v is not None and v.need_grad]


def _first_order_float64(case, arrays, positions, weights, dys):
    """sum_k <weights_k, dx_k> for the float64 kernel's gradients dx_k (given dys): the
    quantity whose derivatives the second-order graph computes."""
    kernel, xs, _ = make_kernel(case, arrays, np.float64)
    ys = kernel.forward(xs)
    pd = [i in positions for i in range(len(xs))]
    grads = kernel.backward(xs, list(ys), dys, pd)
    return sum(float((np.asarray(grads[i], np.float64) * w).sum())
               for i, w in zip(positions, weights) if w is not None and grads[i] is not None)


def _replace(arrays, position, value):
    """The case's input arrays with flat input ``position`` replaced by ``value``."""
    out, k = [], 0
    for a in arrays:
        if isinstance(a, list):
            out.append([value if k + j == position else b for j, b in enumerate(a)])
            k += len(a)
        else:
            out.append(value if k == position else a)
            k += 1
    return out


EPS_SECOND = 1e-4


@pytest.mark.parametrize("case", [c for c in CASES if c.second_order], ids=str)
def test_second_order_gradient_matches_float64_central_differences(case):
    # The reference differentiates the float64 kernel's backward (itself checked against
    # central differences of forward at 1e-6), not the backward-function graph under test;
    # the graph runs in float32, hence the 1e-4 tolerance.
    arrays = case.make_inputs()
    xs, leaves, ys, dys = _setup(case)
    positions = _leaf_positions(case, xs)
    grads = nn.grad(ys, leaves, grad_outputs=dys)
    rng = np.random.RandomState(11)
    weights = [None if g is None else np.float32(rng.randn(*g.shape)) for g in grads]
    terms = [F.sum(g * nn.Variable.from_numpy_array(w)) for g, w in zip(grads, weights)
             if g is not None]
    assert terms, f"{case}: nn.grad gave no gradient for a case with second_order set"
    objective = terms[0]
    for t in terms[1:]:
        objective = objective + t
    second = nn.grad([objective], leaves + dys)
    live = [s for s in second if s is not None]
    nn.forward_all([objective] + live)
    flat = flatten(arrays)
    dy64 = [d.d.astype(np.float64) for d in dys]
    w64 = [None if w is None else w.astype(np.float64) for w in weights]

    def phi(position=None, value=None, dy_index=None):
        use = arrays if position is None else _replace(arrays, position, value)
        d = list(dy64)
        if dy_index is not None:
            d[dy_index] = value
        return _first_order_float64(case, use, positions, w64, d)

    for k, s in enumerate(second):
        if s is None:
            continue
        base = (flat[positions[k]] if k < len(positions) else dy64[k - len(positions)])
        base = base.astype(np.float64)
        numeric = np.zeros(base.size)
        for j in range(base.size):
            values = []
            for sign in (1, -1):
                pert = base.copy().reshape(-1)
                pert[j] += sign * EPS_SECOND
                pert = pert.reshape(base.shape)
                if k < len(positions):
                    values.append(phi(positions[k], pert))
                else:
                    values.append(phi(value=pert, dy_index=k - len(positions)))
            numeric[j] = (values[0] - values[1]) / (2 * EPS_SECOND)
        np.testing.assert_allclose(s.d.reshape(-1), numeric, atol=1e-4, rtol=1e-4,
                                   err_msg=f"{case}: second-order gradient w.r.t. "
                                           + (f"input {positions[k]}" if k < len(positions)
                                              else f"dy {k - len(positions)}"))
