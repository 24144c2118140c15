"""The native (C++) softmax cross-entropy against a float64 numpy formula.

Imported directly, never skipped: a missing C++ build must fail here, not fall back quietly.
"""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu.kernels import CPU_KERNELS, native

SHAPES = [((5, 7), 1), ((3, 4, 6), 1), ((3, 4, 6), 2), ((3, 4, 6), 0), ((64, 10), 1)]


def _kernel(shape, axis):
    spec = SPECS["SoftmaxCrossEntropy"]
    t_shape = tuple(1 if i == axis else n for i, n in enumerate(shape))
    args, outs = infer(spec, [shape, t_shape], bind_args(spec, {"axis": axis}), -1)
    kernel = native.SoftmaxCrossEntropy.__new__(native.SoftmaxCrossEntropy)
    kernel.xp = np
    kernel.__init__(spec, args, [shape, t_shape], outs)
    return kernel, t_shape


def _reference(x, t, axis, dy):
    x = x.astype(np.float64)
    logp = x - x.max(axis, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis, keepdims=True))
    safe = np.where(t < 0, 0, t)
    y = np.where(t < 0, 0.0, -np.take_along_axis(logp, safe, axis))
    onehot = np.zeros_like(x)
    np.put_along_axis(onehot, safe, 1.0, axis)
    dx = (np.exp(logp) - onehot) * np.where(t < 0, 0.0, dy)
    return y, dx


def test_the_cpu_table_uses_the_native_kernel():
    assert CPU_KERNELS["SoftmaxCrossEntropy"] is native.SoftmaxCrossEntropy


@pytest.mark.parametrize("shape,axis", SHAPES)
def test_forward_and_backward_match_the_formula(shape, axis):
    rng = np.random.default_rng(7)
    kernel, t_shape = _kernel(shape, axis)
    x = (rng.normal(size=shape) * 4).astype(np.float32)
    t = rng.integers(-1, shape[axis], size=t_shape)      # -1: ignored positions
    dy = rng.normal(size=t_shape).astype(np.float32)
    y_ref, dx_ref = _reference(x, t, axis, dy)
    (y,) = kernel.forward([x, t])
    dx, dt = kernel.backward([x, t], [y], [dy], [True, False])
    assert y.dtype == np.float32 and y.shape == t_shape and dt is None
    np.testing.assert_allclose(y, y_ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-5, atol=1e-6)
    assert np.all(y[t < 0] == 0)


def test_float64_inputs_are_computed_in_float64():
    kernel, t_shape = _kernel((4, 5), 1)
    x = np.random.default_rng(1).normal(size=(4, 5))
    t = np.array([[0], [4], [2], [-3]])
    (y,) = kernel.forward([x, t])
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, _reference(x, t, 1, np.ones(t_shape))[0], rtol=1e-13)


def test_a_label_past_the_classes_raises_naming_the_function():
    kernel, _ = _kernel((2, 3), 1)
    x = np.zeros((2, 3), np.float32)
    t = np.array([[1], [3]])
    with pytest.raises(ValueError, match=r"softmax_cross_entropy.*'target'.*3"):
        kernel.forward([x, t])
    with pytest.raises(ValueError, match=r"softmax_cross_entropy.*'target'.*3"):
        kernel.backward([x, t], [None], [np.ones((2, 1), np.float32)], [True, False])
