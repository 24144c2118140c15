"""The normalization adapters of ``nnabla.functions`` (beta/gamma None, output_stat, ...)."""
import inspect

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F

RNG = np.random.RandomState(0)
X = (RNG.randn(4, 3, 2, 2) * 2 + 1).astype(np.float32)
P = (1, 3, 1, 1)
RED = (0, 2, 3)
SIGNATURES = [line.split("\t") for line in """\
batch_normalization\t(x, beta, gamma, mean, variance, axes=[1], decay_rate=0.9, eps=1e-05, batch_stat=True, output_stat=False, n_outputs=None)
fused_batch_normalization\t(x, beta, gamma, mean, variance, z=None, axes=[1], decay_rate=0.9, eps=1e-05, batch_stat=True, nonlinearity='relu', output_stat=False, n_outputs=None)
layer_normalization\t(x, beta, gamma, batch_axis=0, eps=1e-05, output_stat=False)
instance_normalization\t(x, beta, gamma, channel_axis=1, batch_axis=0, eps=1e-05, output_stat=False)
group_normalization\t(x, beta, gamma, num_groups, channel_axis=1, batch_axis=0, eps=1e-05, output_stat=False)
tensor_normalization\t(x, axes, beta=None, gamma=None, eps=1e-05, output_stat=False)
weight_standardization\t(w, channel_axis=0, eps=1e-05, output_stat=False)
norm_normalization\t(x, p=None, axes=None, eps=1e-12)
mean_subtraction\t(x, mean, t, base_axis=1, update_running_mean=True)
clip_by_value\t(x, min, max)
clip_by_norm\t(x, clip_norm, axis=None)
clip_grad_by_norm\t(x, clip_norm=None, axes=None, n_outputs=-1, outputs=None)
clip_grad_by_value\t(x, min, max, n_outputs=-1, outputs=None)
weight_normalization\t(w, g, dim=0, eps=1e-12, n_outputs=-1, outputs=None)""".splitlines()]  # noqa: E501


@pytest.mark.parametrize("name, sig", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_normalization_functions_have_nnabla_signatures(name, sig):
    assert str(inspect.signature(getattr(F, name))) == sig


def _var(a, need_grad=False):
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def _standardized(x, red, eps=1e-5):
    m = x.mean(axis=red, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=red, keepdims=True) + eps)


def test_batch_normalization_without_affine_updates_running_stats():
    x, rm, rv = _var(X, True), _var(np.zeros(P)), _var(np.ones(P))
    y = F.batch_normalization(x, None, None, rm, rv, decay_rate=0.5)
    y.forward()
    np.testing.assert_allclose(y.d, _standardized(X, RED), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm.d, 0.5 * X.mean(axis=RED, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(rv.d, 0.5 + 0.5 * X.var(axis=RED, ddof=1, keepdims=True),
                               rtol=1e-5)


def test_batch_normalization_inference_uses_running_stats():
    rm, rv = _var(np.full(P, 0.5)), _var(np.full(P, 4.0))
    y = F.batch_normalization(_var(X), _var(np.ones(P)), _var(np.full(P, 2.0)), rm, rv,
                              batch_stat=False)
    y.forward()
    np.testing.assert_allclose(y.d, (X - 0.5) / np.sqrt(4 + 1e-5) * 2 + 1, rtol=1e-5)


def test_batch_normalization_rejects_missing_running_stats_in_inference():
    with pytest.raises(ValueError, match="batch_stat=False"):
        F.batch_normalization(_var(X), None, None, None, None, batch_stat=False)


def test_batch_normalization_output_stat_returns_batch_mean_and_variance():
    y, m, v = F.batch_normalization(_var(X), None, None, _var(np.zeros(P)), _var(np.ones(P)),
                                    output_stat=True)
    y.forward()
    np.testing.assert_allclose(m.d, X.mean(axis=RED, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(v.d, X.var(axis=RED, keepdims=True), rtol=1e-5)


def test_fused_batch_normalization_adds_z_and_applies_relu():
    z = RNG.randn(*X.shape).astype(np.float32)
    y = F.fused_batch_normalization(_var(X), None, None, _var(np.zeros(P)), _var(np.ones(P)),
                                    _var(z))
    y.forward()
    np.testing.assert_allclose(y.d, np.maximum(_standardized(X, RED) + z, 0), rtol=1e-4,
                               atol=1e-5)


def test_layer_normalization_with_affine_and_gradients():
    gamma = _var(RNG.rand(1, 3, 2, 2) + 0.5, True)
    x = _var(X, True)
    y = F.layer_normalization(x, None, gamma)
    y.forward()
    np.testing.assert_allclose(y.d, _standardized(X, (1, 2, 3)) * gamma.d, rtol=1e-4, atol=1e-5)
    y.backward()
    np.testing.assert_allclose(x.g.sum(axis=(1, 2, 3)), 0, atol=1e-4)


def test_instance_group_tensor_normalization_match_numpy():
    y = F.instance_normalization(_var(X), None, None)
    y.forward()
    np.testing.assert_allclose(y.d, _standardized(X, (2, 3)), rtol=1e-4, atol=1e-4)
    x6 = RNG.randn(2, 6, 3).astype(np.float32)
    y = F.group_normalization(_var(x6), None, None, num_groups=3)
    y.forward()
    ref = _standardized(x6.reshape(2, 3, 2, 3), (2, 3)).reshape(x6.shape)
    np.testing.assert_allclose(y.d, ref, rtol=1e-4, atol=1e-4)
    y = F.tensor_normalization(_var(X), [0, 1])
    y.forward()
    np.testing.assert_allclose(y.d, _standardized(X, (2, 3)), rtol=1e-4, atol=1e-4)


def test_clip_by_value_and_clip_by_norm():
    x = _var([[3.0, -4.0], [0.3, 0.4]])
    y = F.clip_by_value(x, -1, 2)
    y.forward()
    np.testing.assert_allclose(y.d, [[2, -1], [0.3, 0.4]], rtol=1e-6)
    y = F.clip_by_norm(x, 1.0, axis=1)
    y.forward()
    np.testing.assert_allclose(y.d, [[0.6, -0.8], [0.3, 0.4]], rtol=1e-5)
    with pytest.raises(TypeError, match="'min'"):
        F.clip_by_value(x, "a", 1)


def test_clip_grad_by_norm_defaults_to_unit_norm():
    x = _var([[3.0, 4.0]], True)
    y = F.clip_grad_by_norm(x)
    y.forward()
    y.backward(np.array([[3.0, 4.0]], np.float32))
    np.testing.assert_allclose(x.g, [[0.6, 0.8]], rtol=1e-6)
