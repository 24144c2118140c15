"""F.dot (numpy.dot's cases) against numpy in float64: values, gradients, ``out``."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F

SHAPES = [((100,), (100,)), ((3, 4), (4, 2)), ((2, 3, 100), (100,)), ((2, 3, 2), (2, 2, 2)),
          ((), (3, 4)), ((3,), ())]


def _value(rng, shape):
    return np.asarray(rng.randn(*shape), dtype=np.float32)


@pytest.mark.parametrize("shape_a, shape_b", SHAPES)
def test_dot_matches_numpy_in_value_and_gradient(shape_a, shape_b):
    rng = np.random.RandomState(1)
    a, b = _value(rng, shape_a), _value(rng, shape_b)
    va = nn.Variable.from_numpy_array(a, need_grad=True)
    vb = nn.Variable.from_numpy_array(b, need_grad=True)
    y = F.dot(va, vb)
    want = np.dot(a.astype(np.float64), b.astype(np.float64))
    dy = _value(rng, np.shape(want))
    y.forward()
    np.testing.assert_allclose(y.d, want, rtol=1e-5, atol=1e-5)
    va.grad.zero()
    vb.grad.zero()
    y.backward(dy)
    # gradients of sum(dy * dot(a, b)) by the chain rule, from numpy's own dot
    da = np.zeros(shape_a)
    db = np.zeros(shape_b)
    step = 1e-3
    for x, g in ((a, da), (b, db)):
        for i in np.ndindex(x.shape):
            saved = x[i]
            x[i] = saved + step
            up = np.sum(dy * np.dot(a.astype(np.float64), b.astype(np.float64)))
            x[i] = saved - step
            down = np.sum(dy * np.dot(a.astype(np.float64), b.astype(np.float64)))
            x[i] = saved
            g[i] = (up - down) / (2 * step)
    # as nnabla: a 0-d operand enters as a constant factor (F.mul_scalar), no gradient
    np.testing.assert_allclose(va.g, da if a.ndim else 0, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(vb.g, db if b.ndim else 0, rtol=1e-3, atol=1e-3)


def test_dot_writes_into_out_and_rejects_a_mismatched_one():
    a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = nn.NdArray.from_numpy_array(np.ones(3, np.float32))
    out = nn.NdArray((2,))
    out.cast(np.float32)
    assert F.dot(a, b, out) is None
    np.testing.assert_array_equal(out.data, [3, 12])
    with pytest.raises(ValueError, match="F.dot: argument 'out'"):
        F.dot(a, b, nn.NdArray((3,)))
