"""Backward functions whose gradient is not the numerical one, checked against what they
define: spectral_norm (power-iteration vectors held constant) and batch_cholesky (the
symmetric gradient, checked along symmetric directions)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def _var(array, need_grad=True):
    return nn.Variable.from_numpy_array(np.float32(array), need_grad=need_grad)


def _moved(w, dim):
    m = np.moveaxis(w, dim, 0)
    return m.reshape(m.shape[0], -1)


def _spectral_vectors(mat, u, itr, eps=1e-12):
    for _ in range(itr):
        v = mat.T @ u
        v = v / np.sqrt((v * v).sum() + eps)
        u = mat @ v
        u = u / np.sqrt((u * u).sum() + eps)
    return u, v


def _held_gradient(w, dy, u, v, dim):
    """dW of <dy, W / (u^T W v)> with u, v constants (float64)."""
    mat, dmat = _moved(w, dim), _moved(dy, dim)
    sigma = u @ mat @ v
    g = dmat / sigma - (dmat * mat).sum() / sigma ** 2 * np.outer(u, v)
    moved = np.moveaxis(w, dim, 0).shape
    return np.moveaxis(g.reshape(moved), 0, dim)


@pytest.mark.parametrize("shape, dim, args", [((6, 5), 0, {"test": True}),
                                              ((4, 3, 5), 2, {"itr": 2, "output_u": True}),
                                              ((3, 4, 2), 1, {"itr": 3, "test": True,
                                                              "output_u": True})])
def test_spectral_norm_gradient_is_differentiated_with_u_and_v_held(shape, dim, args):
    rng = np.random.RandomState(0)
    w, dy = _var(rng.randn(*shape)), _var(rng.randn(*shape))
    u0 = rng.randn(shape[dim]).astype(np.float32)
    out = F.spectral_norm(w, _var(u0, need_grad=False), dim=dim, **args)
    y = out[0] if isinstance(out, tuple) else out
    (g,) = nn.grad([y], [w], grad_outputs=[dy])
    r = rng.randn(*shape)
    gw, gdy = nn.grad([F.sum(g * _var(r, need_grad=False))], [w, dy])
    nn.forward_all([y, g, gw, gdy])
    u, v = _spectral_vectors(_moved(w.d.astype(np.float64), dim), u0, args.get("itr", 1))

    def objective(w_value, dy_value):
        return (_held_gradient(w_value, dy_value, u, v, dim) * r).sum()

    base_w, base_dy = w.d.astype(np.float64), dy.d.astype(np.float64)
    np.testing.assert_allclose(g.d, _held_gradient(base_w, base_dy, u, v, dim), atol=1e-5)
    h, direction = 1e-4, rng.randn(*shape)
    numeric_w = (objective(base_w + h * direction, base_dy)
                 - objective(base_w - h * direction, base_dy)) / (2 * h)
    numeric_dy = (objective(base_w, base_dy + h * direction)
                  - objective(base_w, base_dy - h * direction)) / (2 * h)
    np.testing.assert_allclose((gw.d * direction).sum(), numeric_w, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose((gdy.d * direction).sum(), numeric_dy, rtol=1e-3, atol=1e-4)


def test_spectral_norm_updating_u_keeps_the_kernel_first_order_gradient():
    rng = np.random.RandomState(1)
    w, dy = _var(rng.randn(4, 6)), _var(rng.randn(4, 6))
    y = F.spectral_norm(w, _var(rng.randn(4), need_grad=False))
    (g,) = nn.grad([y], [w], grad_outputs=[dy])
    nn.forward_all([y, g])
    w.grad.zero()
    y.backward(dy.d)
    np.testing.assert_allclose(g.d, w.g, rtol=1e-6)
    with pytest.raises(NotImplementedError):
        nn.grad([F.sum(g)], [w])[0].forward()


def _spd(rng, batch, n):
    a = rng.randn(batch, n, n)
    return a @ a.transpose(0, 2, 1) + n * np.eye(n)


@pytest.mark.parametrize("upper", [False, True])
def test_batch_cholesky_second_order_matches_central_differences(upper):
    rng = np.random.RandomState(2)
    x = _var(_spd(rng, 2, 4))
    y = F.batch_cholesky(x, upper=upper)
    dy = _var(rng.randn(2, 4, 4))
    (g,) = nn.grad([y], [x], grad_outputs=[dy])
    objective = F.sum(g * _var(rng.randn(2, 4, 4), need_grad=False))
    gx, gdy = nn.grad([objective], [x, dy])
    nn.forward_all([objective, gx, gdy])
    x.grad.zero()
    y.backward(dy.d)
    np.testing.assert_allclose(g.d, x.g, rtol=1e-5, atol=1e-6)
    for v, s, symmetric in ((x, gx, True), (dy, gdy, False)):
        e = rng.randn(2, 4, 4)
        e = e + e.transpose(0, 2, 1) if symmetric else e
        base, values = v.d.copy(), []
        for sign in (1, -1):
            v.d = base + sign * 1e-3 * e
            objective.forward()
            values.append(float(objective.d))
        v.d = base
        # float32 graph, step 1e-3: the observed error is <= 1e-4.
        np.testing.assert_allclose((s.d * e).sum(), (values[0] - values[1]) / 2e-3,
                                   rtol=2e-3, atol=2e-3)
