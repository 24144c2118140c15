"""The native element-wise kernels (tanh, GELU) agree with the generic numpy kernels they
override and with float64 formulas, including large, tiny and non-finite inputs."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC, native

SQRT_2_OVER_PI = np.sqrt(2 / np.pi)
EDGES = [0.0, -0.0, 1e-30, -1e-8, 0.6249, 0.625, 0.6251, 3.0, 9.0, -9.0, 44.0, -44.0, 100.0,
         -100.0, 1e30, -1e30]


def _inputs(dtype, size=5000):
    x = np.random.RandomState(0).randn(size) * 4
    x[:len(EDGES)] = EDGES
    return x.astype(dtype)


def _kernel(table, name, shape):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, [shape], bind_args(spec, {}))
    return table[name](spec, bound, [shape], out_shapes)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["Tanh", "GELU"])
def test_native_matches_generic(name, dtype):
    assert CPU_KERNELS[name] is getattr(native, name)
    x = _inputs(dtype).reshape(50, 100)
    dy = np.random.RandomState(1).randn(*x.shape).astype(dtype)
    results = []
    for table in (CPU_KERNELS, GENERIC):
        kernel = _kernel(table, name, x.shape)
        (y,) = kernel.forward([x])
        (dx,) = kernel.backward([x], [y], [dy], [True])
        assert y.dtype == dtype and dx.dtype == dtype and y.shape == dx.shape == x.shape
        results.append((y, dx))
    # float32: the GELU gradient's tail (x < -3) cancels in both kernels
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _ulps(a, ref):
    return np.abs(a.astype(np.float64) - ref) / np.spacing(np.abs(ref).astype(np.float32))


def test_float32_tanh_within_two_ulps_of_float64():
    x = _inputs(np.float32, 200000)
    y = _native.tanh_forward(x)
    assert _ulps(y, np.tanh(x.astype(np.float64))).max() <= 2
    assert y[0] == 0 and np.signbit(y[1]) and y[2] == np.float32(1e-30)
    assert list(y[12:16]) == [1, -1, 1, -1]          # 100, -100, 1e30, -1e30


def test_non_finite_inputs():
    x = np.array([np.nan, np.inf, -np.inf], np.float32)
    y = _native.tanh_forward(x)
    assert np.isnan(y[0]) and y[1] == 1 and y[2] == -1
    assert np.isnan(_native.gelu_forward(x[:1])[0])


def test_gelu_against_float64_formula():
    x = _inputs(np.float32, 20000)
    x = x[np.abs(x) < 1e10]     # x^3 overflows float32 beyond (in the generic kernel too)
    x64 = x.astype(np.float64)
    t = np.tanh(SQRT_2_OVER_PI * (x64 + 0.044715 * x64 ** 3))
    np.testing.assert_allclose(_native.gelu_forward(x), 0.5 * x64 * (1 + t), rtol=1e-6,
                               atol=1e-6)
    dy = np.random.RandomState(2).randn(x.size)
    grad = dy * (0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * SQRT_2_OVER_PI
                 * (1 + 3 * 0.044715 * x64 ** 2))
    np.testing.assert_allclose(_native.gelu_backward(x, dy.astype(np.float32)), grad,
                               rtol=1e-5, atol=1e-5)
    tanh_grad = _native.tanh_backward(np.tanh(x), dy.astype(np.float32))
    np.testing.assert_allclose(tanh_grad, dy * (1 - np.tanh(x64) ** 2), rtol=1e-5, atol=1e-6)


def test_sizes_are_checked():
    with pytest.raises(ValueError, match="dy has 3 elements"):
        _native.gelu_backward(np.zeros(4, np.float32), np.zeros(3, np.float32))
