"""Backward functions of the layer, normalization and dropout family beyond the generic
double-backward check: nnabla's named gradient classes, dropout's mask, and batch
normalization's gradients for its running statistics."""
import numpy as np

import nnabla as nn
import nnabla.functions as F


def _var(rng, shape, need_grad=True):
    return nn.Variable.from_numpy_array(rng.randn(*shape).astype(np.float32),
                                        need_grad=need_grad)


def test_affine_data_grad_is_dy_times_the_weight_transposed():
    from nnabla.backward_function.affine import AffineDataGrad
    rng = np.random.RandomState(0)
    dy, w = _var(rng, (2, 5)), _var(rng, (12, 5))
    df = AffineDataGrad(nn.Context(), 1)
    df.xshape = (2, 3, 4)
    dx = df(dy, w)
    dx.forward()
    np.testing.assert_allclose(dx.d, (dy.d @ w.d.T).reshape(2, 3, 4), rtol=1e-5, atol=1e-6)


def test_dropout_gradient_reuses_the_forward_mask_at_every_order():
    rng = np.random.RandomState(1)
    x = _var(rng, (4, 6))
    y = F.dropout(x, 0.5, seed=5)
    dy = _var(rng, (4, 6))
    (dx,) = nn.grad([y], [x], grad_outputs=[dy])
    (ddy,) = nn.grad([F.sum(dx * dx)], [dy])
    nn.forward_all([y, dx, ddy])
    mask = (y.d != 0) | (x.d == 0)
    np.testing.assert_allclose(dx.d, dy.d * mask * 2.0, rtol=1e-6)
    np.testing.assert_allclose(ddy.d, 2 * dy.d * mask * 4.0, rtol=1e-6)


def test_batch_normalization_with_running_statistics_differentiates_them():
    rng = np.random.RandomState(2)
    x, beta, gamma = _var(rng, (3, 2, 4)), _var(rng, (1, 2, 1)), _var(rng, (1, 2, 1))
    mean = _var(rng, (1, 2, 1))
    variance = nn.Variable.from_numpy_array(np.float32(rng.rand(1, 2, 1) + 0.5),
                                            need_grad=True)
    y = F.batch_normalization(x, beta, gamma, mean, variance, batch_stat=False)
    dy = rng.randn(*y.shape).astype(np.float32)
    y.forward()
    for v in (mean, variance):
        v.grad.zero()
    y.backward(dy)
    scale = gamma.d * dy / np.sqrt(variance.d + 1e-5)
    np.testing.assert_allclose(mean.g, -scale.sum(axis=(0, 2), keepdims=True), rtol=1e-4)
    expected = (scale * (x.d - mean.d)).sum(axis=(0, 2), keepdims=True) \
        * (-0.5 / (variance.d + 1e-5))
    np.testing.assert_allclose(variance.g, expected, rtol=1e-4, atol=1e-6)
