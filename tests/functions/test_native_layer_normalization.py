"""The row-wise native layer normalization (per-feature γ, β; ``_native.row_norm_*``):
against float64 formulas, central differences (including the statistics outputs), the
generic kernel, and bit-equal results on 1, 2 and 3 threads."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer

import nnabla_ext.cpu as cpu
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC


def _kernel(table, shapes, args):
    spec = SPECS["LayerNormalization"]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    return table["LayerNormalization"](spec, bound, shapes, out_shapes), out_shapes


def _param_shape(x, batch_axis):
    return tuple(1 if i in batch_axis else s for i, s in enumerate(x))


CONFIGS = [
    ((4, 6, 5), (0,), {}),
    ((3, 4, 16), (0, 1), {}),
    ((3, 4, 16), (0, 1), {"no_bias": True}),
    ((3, 4, 16), (0, 1), {"no_scale": True}),
    ((5, 7), (0,), {"eps": 1e-2}),
    ((3, 4, 5), (1,), {}),                  # batch axis not leading: the generic code
]


def _inputs(x_shape, batch_axis, args, dtype, seed=0):
    rng = np.random.RandomState(seed)
    p = _param_shape(x_shape, batch_axis)
    x = (rng.randn(*x_shape) * 2 + 3).astype(dtype)
    beta = None if args.get("no_bias") else rng.randn(*p).astype(dtype)
    gamma = None if args.get("no_scale") else rng.randn(*p).astype(dtype)
    return [x, beta, gamma], [x_shape, None if beta is None else p, None if gamma is None else p]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape, batch_axis, extra", CONFIGS)
def test_native_matches_generic_and_formula(x_shape, batch_axis, extra, dtype):
    xs, shapes = _inputs(x_shape, batch_axis, extra, dtype)
    args = {"batch_axis": batch_axis, **extra}
    eps = extra.get("eps", 1e-5)
    kn, outs = _kernel(CPU_KERNELS, shapes, args)
    kg, _ = _kernel(GENERIC, shapes, args)
    assert (kn.rows is not None) == (batch_axis == tuple(range(len(batch_axis))))
    (y,) = kn.forward(xs)
    (yg,) = kg.forward(xs)
    x, beta, gamma = (None if a is None else a.astype(np.float64) for a in xs)
    axes = tuple(i for i in range(x.ndim) if i not in batch_axis)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    xhat = (x - mean) / np.sqrt(var + eps)
    ref = xhat * (1 if gamma is None else gamma) + (0 if beta is None else beta)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(y, ref, rtol=tol, atol=tol)
    np.testing.assert_allclose(y, yg, rtol=tol, atol=tol)
    dy = np.random.RandomState(1).randn(*x_shape)
    pd = [True, beta is not None, gamma is not None]
    grads = kn.backward(xs, [y], [dy.astype(dtype)], pd)
    grads_g = kg.backward(xs, [yg], [dy.astype(dtype)], pd)
    n = x.size // mean.size
    g = dy * (1 if gamma is None else gamma)
    dx = (g - g.sum(axis=axes, keepdims=True) / n
          - xhat * (g * xhat).sum(axis=axes, keepdims=True) / n) / np.sqrt(var + eps)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(grads[0], dx, rtol=tol, atol=tol)
    if beta is not None:
        np.testing.assert_allclose(grads[1], dy.sum(axis=batch_axis, keepdims=True),
                                   rtol=tol, atol=tol)
    if gamma is not None:
        np.testing.assert_allclose(grads[2], (dy * xhat).sum(axis=batch_axis, keepdims=True),
                                   rtol=tol, atol=tol)
    for a, b in zip(grads, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_statistics_outputs_and_their_gradients_against_central_differences():
    """float64, with the mean and variance outputs: the gradient of
    sum(y wy) + sum(mean wm) + sum(var wv) wrt x, beta, gamma equals central differences."""
    x_shape, batch_axis = (3, 2, 5), (0, 1)
    xs, shapes = _inputs(x_shape, batch_axis, {}, np.float64, seed=2)
    spec = SPECS["LayerNormalization"]
    args = {"batch_axis": batch_axis}
    bound, outs = infer(spec, shapes, bind_args(spec, args), n_outputs=3)
    make = lambda: CPU_KERNELS["LayerNormalization"](spec, bound, shapes, outs)  # noqa: E731
    kernel = make()
    assert kernel.rows == (6, 5)
    ys = kernel.forward(xs)
    assert len(ys) == 3
    mean = xs[0].mean(axis=2, keepdims=True)
    np.testing.assert_allclose(ys[1], mean, rtol=1e-12)
    np.testing.assert_allclose(ys[2], xs[0].var(axis=2, keepdims=True), rtol=1e-12)
    rng = np.random.RandomState(3)
    dys = [rng.randn(*s) for s in outs]
    grads = kernel.backward(xs, list(ys), dys, [True, True, True])

    def loss(values):
        return sum(float((y * d).sum()) for y, d in zip(make().forward(values), dys))

    for k in range(3):
        numeric = np.empty_like(xs[k])
        for i in range(xs[k].size):
            plus, minus = ([a.copy() for a in xs] for _ in range(2))
            plus[k].reshape(-1)[i] += 1e-6
            minus[k].reshape(-1)[i] -= 1e-6
            numeric.reshape(-1)[i] = (loss(plus) - loss(minus)) / 2e-6
        np.testing.assert_allclose(grads[k], numeric, rtol=1e-6, atol=1e-7)


@pytest.fixture
def threads():
    before = cpu.get_num_threads()
    yield cpu.set_num_threads
    cpu.set_num_threads(before)


def test_same_bits_on_any_thread_count(threads):
    rng = np.random.RandomState(4)
    rows, features = 96, 700                       # several column blocks of 256, rows > 1
    x, dy = rng.randn(rows, features).astype(np.float32), rng.randn(rows, features).astype(
        np.float32)
    gamma, beta = rng.randn(features).astype(np.float32), rng.randn(features).astype(
        np.float32)
    dm, dv = rng.randn(rows).astype(np.float32), rng.randn(rows).astype(np.float32)
    results = []
    for n in (1, 2, 3):
        threads(n)
        y, mean, var, inv = _native.row_norm_forward(x, gamma, beta, rows, features, 1e-5)
        grads = _native.row_norm_backward(x, dy, mean, inv, gamma, dm, dv, rows, features,
                                          True, True, True)
        results.append([y, mean, var, inv, *grads])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


def test_entry_points_check_sizes():
    x = np.zeros(12, np.float32)
    with pytest.raises(ValueError, match="argument 'gamma' has 3 elements; expected 4"):
        _native.row_norm_forward(x, np.zeros(3, np.float32), None, 3, 4, 1e-5)
    with pytest.raises(ValueError, match="argument 'mean' has 4 elements; expected 3"):
        _native.row_norm_backward(x, x, np.zeros(4, np.float32), np.zeros(3, np.float32),
                                  None, None, None, 3, 4, True, False, False)
    dx, db, dg = _native.row_norm_backward(x, x, *(np.zeros(3, np.float32),) * 2, None, None,
                                           None, 3, 4, False, True, False)
    assert dx is None and dg is None and db.shape == (4,)
