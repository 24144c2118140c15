"""PF.fused_batch_normalization: nnabla's function node and batch statistics (numpy)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.parametric_functions as PF


@pytest.mark.parametrize("with_z", [False, True])
def test_fused_batch_normalization_with_output_stat_returns_the_batch_statistics(with_z):
    rng = np.random.RandomState(0)
    xv = rng.randn(8, 4).astype(np.float32)
    zv = rng.randn(8, 4).astype(np.float32)
    nn.clear_parameters()
    try:
        x = nn.Variable.from_numpy_array(xv)
        z = nn.Variable.from_numpy_array(zv) if with_z else None
        y, mean, var = PF.fused_batch_normalization(x, z, output_stat=True)
        f = y.parent
        assert f.info.type_name == "FusedBatchNormalization"
        assert len(f.inputs) == (6 if with_z else 5)
        _, beta, gamma, running_mean, running_var = f.inputs[:5]
        assert beta.need_grad and gamma.need_grad and not running_mean.need_grad
        y.forward()
        np.testing.assert_allclose(mean.d.ravel(), xv.mean(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(var.d.ravel(), xv.var(0), rtol=1e-5, atol=1e-6)
        want = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-5) + (zv if with_z else 0)
        np.testing.assert_allclose(y.d, np.maximum(want, 0), rtol=1e-4, atol=1e-5)
    finally:
        nn.clear_parameters()


def _numpy_spectral_norm(w, u, dim, itr, eps=1e-12):
    """Power iteration on w with ``dim`` moved first: (w / sigma, the new u)."""
    mat = np.moveaxis(w, dim, 0)
    moved_shape = mat.shape
    mat = mat.reshape(mat.shape[0], -1).astype(np.float64)
    for _ in range(itr):
        v = mat.T @ u
        v = v / np.sqrt(np.sum(v ** 2) + eps)
        u = mat @ v
        u = u / np.sqrt(np.sum(u ** 2) + eps)
    sigma = u @ mat @ v
    return np.moveaxis((mat / sigma).reshape(moved_shape), 0, dim), u, v, sigma


@pytest.mark.parametrize("shape, dim", [((6, 3, 2), 0), ((5, 4), 1), ((3, 2, 4), 2)])
@pytest.mark.parametrize("itr", [1, 3])
def test_private_spectral_norm_v1_matches_the_power_iteration_and_stores_w_sn_and_u(
        shape, dim, itr):
    rng = np.random.RandomState(1)
    wv = rng.randn(*shape).astype(np.float32)
    uv = rng.randn(shape[dim]).astype(np.float32)
    want, u_new, v, sigma = _numpy_spectral_norm(wv, uv.astype(np.float64), dim, itr)
    nn.clear_parameters()
    try:
        w = nn.Variable.from_numpy_array(wv, need_grad=True)
        y = PF._spectral_norm_v1(w, dim=dim, itr=itr, u_init=uv)
        params = nn.get_parameters(grad_only=False)
        assert sorted(params) == ["spectral-norm/W_sn", "spectral-norm/u"]
        y.forward()
        np.testing.assert_allclose(y.d, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(params["spectral-norm/W_sn"].d, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(params["spectral-norm/u"].d, u_new, rtol=1e-4, atol=1e-5)
        # u, v held constant: d(w / (u^T w v)) = dy / sigma - <dy, w> u v^T / sigma^2
        dy = rng.randn(*shape)
        w.grad.zero()
        y.backward(dy.astype(np.float32))
        mat = np.moveaxis(wv, dim, 0).reshape(shape[dim], -1).astype(np.float64)
        dmat = np.moveaxis(dy, dim, 0).reshape(mat.shape)
        g = dmat / sigma - np.sum(dmat * mat) * np.outer(u_new, v) / sigma ** 2
        g = np.moveaxis(g.reshape(np.moveaxis(wv, dim, 0).shape), 0, dim)
        np.testing.assert_allclose(w.g, g, rtol=1e-3, atol=1e-4)
        # The one-function version agrees (forward and gradient).
        nn.clear_parameters()
        w2 = nn.Variable.from_numpy_array(wv, need_grad=True)
        y2 = PF.spectral_norm(w2, dim=dim, itr=itr, u_init=uv)
        y2.forward()
        w2.grad.zero()
        y2.backward(dy.astype(np.float32))
        np.testing.assert_allclose(y2.d, y.d, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(w2.g, w.g, rtol=1e-3, atol=1e-4)
    finally:
        nn.clear_parameters()


def test_private_spectral_norm_v1_test_mode_returns_the_stored_w_sn():
    nn.clear_parameters()
    try:
        w = nn.Variable.from_numpy_array(np.ones((3, 2), np.float32))
        y = PF._spectral_norm_v1(w, test=True)
        np.testing.assert_array_equal(y.d, np.zeros((3, 2)))
        nn.get_parameters(grad_only=False)["spectral-norm/W_sn"].d = 7.0
        np.testing.assert_array_equal(y.d, np.full((3, 2), 7.0))   # the parameter itself
        with pytest.raises(ValueError, match=r"PF._spectral_norm_v1: argument 'dim' is 2"):
            PF._spectral_norm_v1(w, dim=2)
        with pytest.raises(ValueError, match=r"argument 'itr' is 0; expected an int > 0"):
            PF._spectral_norm_v1(w, itr=0)
    finally:
        nn.clear_parameters()
