"""The native per-channel normalization and softmax kernels agree with the generic numpy
kernels they override, and with float64 formulas written here."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC, native

C4 = (1, 4, 1, 1)
CONFIGS = [
    ("BatchNormalization", [(3, 4, 5, 6), C4, C4, C4, C4], {"axes": (1,)}),
    ("BatchNormalization", [(3, 4, 5, 6), C4, C4, C4, C4], {"axes": (1,), "batch_stat": False}),
    ("BatchNormalization", [(6, 5, 4), (1, 1, 4), (1, 1, 4), (1, 1, 4), (1, 1, 4)],
     {"axes": (2,)}),
    ("BatchNormalization", [(2, 4, 3), (1, 4, 1), (1, 4, 1), (1, 4, 1), (1, 4, 1)],
     {"axes": (1,), "eps": 1e-3, "decay_rate": 0.5}),
    ("BatchNormalization", [(3, 4, 5, 6), None, None, C4, C4],
     {"axes": (1,), "no_bias": True, "no_scale": True}),
    ("LayerNormalization", [(2, 3, 8), (1, 1, 8), (1, 1, 8)], {"batch_axis": (0, 1)}),
    ("LayerNormalization", [(3, 5, 4, 2), (1, 5, 4, 2), (1, 5, 4, 2)], {"batch_axis": (0,)}),
    ("LayerNormalization", [(3, 5, 4), (1, 5, 4), (1, 5, 4)], {"batch_axis": (0,)}),
    ("InstanceNormalization", [(2, 3, 4, 5), (1, 3, 1, 1), (1, 3, 1, 1)], {}),
    ("InstanceNormalization", [(2, 3, 4, 5), (2, 3, 1, 1), (2, 3, 1, 1)], {}),
    ("Softmax", [(4, 3, 7)], {"axis": 2}),
    ("Softmax", [(4, 3, 7)], {"axis": 1}),
    ("Softmax", [(5, 1)], {}),
]


def _kernel(table, name, shapes, args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    return table[name](spec, bound, shapes, out_shapes)


def _inputs(shapes, dtype, seed):
    rng = np.random.RandomState(seed)
    xs = [None if s is None else rng.randn(*s).astype(dtype) for s in shapes]
    if len(xs) > 4 and xs[4] is not None:
        xs[4] = np.abs(xs[4]) + 0.5          # a variance
    return xs


def _run(table, name, shapes, args, dtype, seed=0):
    xs = _inputs(shapes, dtype, seed)
    kernel = _kernel(table, name, shapes, args)
    ys = kernel.forward(xs)
    dys = [np.random.RandomState(seed + 1).randn(*y.shape).astype(dtype) for y in ys]
    grads = kernel.backward(xs, list(ys), dys, [x is not None for x in xs])
    return xs, ys, grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, shapes, args", CONFIGS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)])
def test_native_matches_generic(name, shapes, args, dtype):
    assert CPU_KERNELS[name] is getattr(native, name)
    shapes = [None if s is None else tuple(s) for s in shapes]
    tol = 2e-4 if dtype == np.float32 else 1e-10
    xs_n, ys_n, grads_n = _run(CPU_KERNELS, name, shapes, args, dtype)
    xs_g, ys_g, grads_g = _run(GENERIC, name, shapes, args, dtype)
    for a, b in zip(ys_n + tuple(xs_n[3:]), ys_g + tuple(xs_g[3:])):  # + running stats
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    for a, b in zip(grads_n, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_batch_normalization_against_float64_formula():
    x = np.random.RandomState(3).randn(8, 5, 3, 2).astype(np.float32) * 3 + 7
    beta, gamma = (np.random.RandomState(s).randn(1, 5, 1, 1).astype(np.float32)
                   for s in (4, 5))
    rm, rv = np.zeros((1, 5, 1, 1), np.float32), np.ones((1, 5, 1, 1), np.float32)
    shapes = [x.shape] + [(1, 5, 1, 1)] * 4
    kernel = _kernel(CPU_KERNELS, "BatchNormalization", shapes, {"axes": (1,)})
    (y,) = kernel.forward([x, beta, gamma, rm, rv])
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=(0, 2, 3), keepdims=True)
    var = x64.var(axis=(0, 2, 3), keepdims=True)
    xhat = (x64 - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(y, xhat * gamma + beta, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm, 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, 0.9 + 0.1 * var * 48 / 47, rtol=1e-5)
    # d/dx of sum(y * g): the textbook batch-normalization gradient
    g = np.random.RandomState(6).randn(*x.shape)
    dx, dbeta, dgamma = kernel.backward([x, beta, gamma, rm, rv], [y],
                                        [g.astype(np.float32)], [True, True, True, False,
                                                                 False])[:3]
    n = 8 * 3 * 2
    dxhat = g * gamma
    ref = (dxhat - dxhat.sum(axis=(0, 2, 3), keepdims=True) / n
           - xhat * (dxhat * xhat).sum(axis=(0, 2, 3), keepdims=True) / n) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(dx, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(dbeta, g.sum(axis=(0, 2, 3), keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(dgamma, (g * xhat).sum(axis=(0, 2, 3), keepdims=True),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows, n", [
    (6, 33),        # a row: 2 blocks of 16 partial sums and one remaining element
    (300, 40),      # many rows, split across the pool; 8 remaining elements per row
    (3, 5000),      # a few long rows
    (4, 5),         # rows shorter than the 16 partial sums
])
def test_softmax_against_float64_formula(rows, n):
    x = np.random.RandomState(7).randn(rows, n).astype(np.float32) * 20
    y = _native.softmax_forward(x, rows, n).reshape(rows, n)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-7)
    dy = np.random.RandomState(8).randn(rows, n)
    dx = _native.softmax_backward(y, dy.astype(np.float32), rows, n).reshape(rows, n)
    np.testing.assert_allclose(dx, ref * (dy - (dy * ref).sum(axis=1, keepdims=True)),
                               rtol=1e-4, atol=1e-6)


def test_channel_moments_and_affine_against_formulas():
    x = np.random.RandomState(9).randn(3, 4, 5).astype(np.float64) + 2
    mean, var = _native.channel_moments(x, 3, 4, 5)
    np.testing.assert_allclose(mean, x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(var, x.var(axis=(0, 2)), rtol=1e-12)
    a, b, p = (np.arange(4.0) + k for k in (1, 2, 3))
    dy = np.random.RandomState(10).randn(3, 4, 5)
    y = _native.channel_affine(x, mean, a, b, 3, 4, 5, dy, p).reshape(x.shape)
    c = (slice(None), slice(None), None)
    ref = (x - mean[c[1:]]) * a[c[1:]] + b[c[1:]] + dy * p[c[1:]]
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    s, sx = _native.channel_grad_sums(dy, x, mean, 3, 4, 5)
    np.testing.assert_allclose(s, dy.sum(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(sx, (dy * (x - mean[:, None])).sum(axis=(0, 2)), rtol=1e-12)


def test_native_entry_points_check_sizes():
    x = np.zeros(12, np.float32)
    with pytest.raises(ValueError, match="x has 12 elements"):
        _native.channel_moments(x, 2, 2, 2)
    with pytest.raises(ValueError, match="both dy and p"):
        _native.channel_affine(x, *(np.zeros(3, np.float32),) * 3, 1, 3, 4, x)
    with pytest.raises(ValueError, match="dy has 11 elements"):
        _native.softmax_backward(x, np.zeros(11, np.float32), 3, 4)


def test_channel_blocks():
    assert native.channel_blocks((2, 3, 4, 5), (1,)) == (2, 3, 20)
    assert native.channel_blocks((2, 3, 4), (0, 1)) == (1, 6, 4)
    assert native.channel_blocks((2, 3, 4), (0, 2)) is None
    assert native.channel_blocks((2, 3), ()) == (1, 1, 6)
