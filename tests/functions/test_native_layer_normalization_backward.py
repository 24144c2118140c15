"""The native layer normalization's backward (``_native.row_norm_backward``) over every
choice of outputs: dx alone runs row by row; with parameter gradients, the rows' sums come
first and column blocks then give dx and the column sums in one read of x and dy. Checked
against float64 formulas, and dx for bit-equality between the two ways."""
import itertools

import numpy as np
import pytest

from nnabla_ext.cpu import _native


def _case(rows, features, dtype, seed):
    rng = np.random.RandomState(seed)
    x = (rng.randn(rows, features) * 2 + 3).astype(dtype)
    dy = rng.randn(rows, features).astype(dtype)
    gamma = rng.randn(features).astype(dtype)
    beta = rng.randn(features).astype(dtype)
    dm, dv = rng.randn(rows).astype(dtype), rng.randn(rows).astype(dtype)
    return x, dy, gamma, beta, dm, dv


def _reference(x, dy, gamma, dm, dv, eps):
    """(dx, d beta, d gamma) in float64, from y = xhat gamma + beta, mean and var outputs."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    n = x.shape[1]
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    inv = 1 / np.sqrt(var + eps)
    xhat = (x - mean) * inv
    g = dy * (1 if gamma is None else gamma.astype(np.float64))
    dx = (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True)) * inv
    if dm is not None:
        dx += dm.astype(np.float64)[:, None] / n
    if dv is not None:
        dx += dv.astype(np.float64)[:, None] * 2 * (x - mean) / n
    return dx, dy.sum(axis=0), (dy * xhat).sum(axis=0)


# (rows, features): one partial column block; three blocks, the last partial; one row
SIZES = [(5, 100), (7, 700), (1, 300), (64, 1024)]
WANTS = [w for w in itertools.product([True, False], repeat=3) if any(w)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_gamma, with_stats", [(True, False), (False, False),
                                                    (True, True)])
@pytest.mark.parametrize("want", WANTS, ids=lambda w: "".join("xbg"[i] for i in range(3)
                                                             if w[i]))
@pytest.mark.parametrize("rows, features", SIZES)
def test_every_choice_of_outputs_matches_formulas(rows, features, want, with_gamma,
                                                  with_stats, dtype):
    x, dy, gamma, beta, dm, dv = _case(rows, features, dtype, rows + features)
    gamma = gamma if with_gamma else None
    dm, dv = (dm, dv) if with_stats else (None, None)
    _, mean, _, inv = _native.row_norm_forward(x, gamma, beta, rows, features, 1e-5)
    dx, db, dg = _native.row_norm_backward(x, dy, mean, inv, gamma, dm, dv, rows, features,
                                           *want)
    ref = _reference(x, dy, gamma, dm, dv, 1e-5)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got, expected, wanted in zip((dx, db, dg), ref, want):
        if not wanted:
            assert got is None
            continue
        assert got.dtype == dtype
        np.testing.assert_allclose(got.reshape(expected.shape), expected, rtol=tol,
                                   atol=tol * max(1.0, float(np.abs(expected).max())))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_gamma", [True, False])
def test_dx_has_the_same_bits_with_and_without_parameter_gradients(with_gamma, dtype):
    rows, features = 9, 777
    x, dy, gamma, beta, dm, dv = _case(rows, features, dtype, 11)
    gamma = gamma if with_gamma else None
    _, mean, _, inv = _native.row_norm_forward(x, gamma, beta, rows, features, 1e-5)
    alone = _native.row_norm_backward(x, dy, mean, inv, gamma, dm, dv, rows, features,
                                      True, False, False)[0]
    for want_beta, want_gamma in ((True, True), (True, False), (False, True)):
        fused = _native.row_norm_backward(x, dy, mean, inv, gamma, dm, dv, rows, features,
                                          True, want_beta, want_gamma)[0]
        np.testing.assert_array_equal(fused, alone)
