"""The core API against values recorded from nnabla 1.39 (tools/record_api_reference.py)."""
import pathlib

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_api_reference.npz"
REF = np.load(DATA)

# the same cases, in the same order, as the recording script
MATMUL_SHAPES = [((5,), (5,)), ((3,), (5, 3, 2)), ((4, 1, 2, 3), (1, 5, 3, 2)),
                 ((2, 3, 4), (4,)), ((6, 2, 3, 4), (4, 5))]
SETITEM_KEYS = {"rows": ([[2, 2], [3, 3], [4, 4]], [[3, 4], [3, 4], [3, 4]]),
                "slices": (slice(2, 5), slice(3, 5))}


def inputs(seed, *shapes):
    rng = np.random.RandomState(seed)
    return [np.asarray(rng.randn(*s), dtype=np.float32) for s in shapes]


@pytest.mark.parametrize("i", range(len(MATMUL_SHAPES)))
def test_matmul_values_and_gradients_match_nnabla(i):
    a, b = inputs(i, *MATMUL_SHAPES[i])
    va = nn.Variable.from_numpy_array(a, need_grad=True)
    vb = nn.Variable.from_numpy_array(b, need_grad=True)
    y = va @ vb
    y.forward()
    np.testing.assert_allclose(y.d, REF[f"matmul{i}_y"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.d, a @ b, rtol=1e-5, atol=1e-5)
    va.grad.zero()
    vb.grad.zero()
    y.backward(inputs(100 + i, y.shape)[0])
    np.testing.assert_allclose(va.g, REF[f"matmul{i}_ga"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vb.g, REF[f"matmul{i}_gb"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SETITEM_KEYS))
def test_setitem_inside_a_graph_matches_nnabla(name):
    x = nn.Variable.from_numpy_array(np.arange(56, dtype=np.float32).reshape(8, 7),
                                     need_grad=True)
    u = nn.Variable.from_numpy_array(-np.arange(1, 7, dtype=np.float32).reshape(3, 2),
                                     need_grad=True)
    y = F.mul_scalar(x, 2)
    y[SETITEM_KEYS[name]] = u
    z = F.sin(y)
    z.forward()
    x.grad.zero()
    u.grad.zero()
    z.backward(np.arange(56, dtype=np.float32).reshape(8, 7) / 10)
    np.testing.assert_allclose(z.d, REF[f"setitem_{name}_z"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.g, REF[f"setitem_{name}_gx"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(u.g, REF[f"setitem_{name}_gu"], rtol=1e-5, atol=1e-5)


def _shared_affine_grads(x, w, b):
    """numpy: gradients of sum((tanh(x w + b) w + b) ** 2) with respect to w and b."""
    h1 = x @ w + b
    t = np.tanh(h1)
    h2 = t @ w + b
    d2 = 2 * h2
    d1 = (d2 @ w.T) * (1 - t ** 2)
    return x.T @ d1 + t.T @ d2, d1.sum(0) + d2.sum(0)


def test_grad_of_a_parameter_used_twice_sums_both_uses():
    """Deliberate difference: in this graph nnabla 1.39's nn.grad keeps only the second use
    of the shared parameters (its recorded value differs from its own backward); we sum both
    (nnabla sums too in other graphs, e.g. tests/api/test_grad_shared.py's)."""
    nn.clear_parameters()
    try:
        (xv,) = inputs(7, (2, 3))
        x = nn.Variable.from_numpy_array(xv)
        h = PF.affine(x, 3, name="shared")
        h = PF.affine(F.tanh(h), 3, name="shared")
        y = F.sum(h ** 2)
        params = nn.get_parameters()
        for j, param in enumerate(params.values()):
            param.d = inputs(50 + j, param.shape)[0]       # initial values are random
        grads = nn.grad([y], params.values())
        for g in grads:
            g.forward()
        w, b = (p.d.astype(np.float64) for p in params.values())
        want_w, want_b = _shared_affine_grads(xv.astype(np.float64), w, b)
        np.testing.assert_allclose(grads[0].d, want_w, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(grads[1].d, want_b, rtol=1e-4, atol=1e-4)
        assert not np.allclose(REF["grad_W"], want_w, rtol=1e-3)     # nnabla 1.39's value
    finally:
        nn.clear_parameters()
