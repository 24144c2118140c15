"""Backward functions of the normalization family, by differentiating their compositions.

Each normalization is rebuilt from ``F.mean``, arithmetic and powers on the same
inputs (see :mod:`._composite`): ``x̂ = (x - mean) (var + eps)^(-1/2)`` over the
reduced axes, then ``y = x̂ γ + β``. Batch normalization's running statistics are
not updated by the rebuilt graph (it is a gradient, not a forward pass).
"""
from __future__ import annotations

from ._composite import composite_backward
from ._util import F


def reduce_axes(ndim, keep):
    """The axes of an ``ndim`` array that are not in ``keep`` (negative axes allowed)."""
    keep = {a % ndim for a in keep}
    return [a for a in range(ndim) if a not in keep]


def standardize(x, keep, eps):
    """(x̂, mean, var): x standardised over every axis but ``keep`` (biased variance)."""
    axes = reduce_axes(x.ndim, keep)
    mean = F().mean(x, axis=axes, keepdims=True)
    centered = x - mean
    var = F().mean(centered * centered, axis=axes, keepdims=True)
    return centered * (var + eps) ** -0.5, mean, var


def scale_shift(xhat, beta, gamma):
    """x̂ γ + β, each of γ, β optional."""
    y = xhat if gamma is None else xhat * gamma
    return y if beta is None else y + beta


def _as_list(axes):
    return list(axes) if isinstance(axes, (list, tuple)) else [axes]


def batch_norm(x, beta, gamma, mean, variance, axes, eps, batch_stat):
    """Batch normalization as a composition: (y, batch mean, batch var) or (y, None, None)."""
    if batch_stat:
        xhat, batch_mean, batch_var = standardize(x, _as_list(axes), eps)
        return scale_shift(xhat, beta, gamma), batch_mean, batch_var
    xhat = (x - mean) * (variance + eps) ** -0.5
    return scale_shift(xhat, beta, gamma), None, None


def _bn_layout(n_given, no_scale=False, no_bias=False, **args):
    return [True, not no_bias, not no_scale, True, True] + [True] * (n_given > 5)


def _batch_normalization(inputs, output_shapes, axes=(1,), eps=1e-5, batch_stat=True, **args):
    x, beta, gamma, mean, variance = inputs[:5]
    return list(batch_norm(x, beta, gamma, mean, variance, axes, eps, batch_stat))


def _fused_layout(n_given, **args):
    return [True] * 5 + [n_given > 5]


def _fused_batch_normalization(inputs, output_shapes, axes=(1,), eps=1e-5, batch_stat=True,
                               nonlinearity="relu", **args):
    x, beta, gamma, mean, variance, z = inputs
    y, batch_mean, batch_var = batch_norm(x, beta, gamma, mean, variance, axes, eps, batch_stat)
    if z is not None:
        y = y + z
    return [F().relu(y), batch_mean, batch_var]


def _standardizing(keep_axes):
    """A composition of a layer/instance/group/tensor normalization with ``keep_axes``."""
    def forward(inputs, output_shapes, eps=1e-5, **args):
        x, beta, gamma = inputs
        xhat, mean, var = standardize(x, keep_axes(x.ndim, **args), eps)
        return [scale_shift(xhat, beta, gamma), mean, var]
    return forward


def _scale_bias_layout(n_given, no_scale=False, no_bias=False, **args):
    return [True, not no_bias, not no_scale]


def _group_normalization(inputs, output_shapes, num_groups=1, channel_axis=1, batch_axis=0,
                         eps=1e-5, **args):
    x, beta, gamma = inputs
    shape = list(x.shape)
    channel_axis %= x.ndim
    grouped = shape[:channel_axis] + [num_groups, shape[channel_axis] // num_groups] \
        + shape[channel_axis + 1:]
    keep = [a % x.ndim for a in _as_list(batch_axis)] + [channel_axis]
    xhat, mean, var = standardize(F().reshape(x, grouped), keep, eps)
    y = scale_shift(F().reshape(xhat, shape), beta, gamma)
    stats = [F().reshape(s, shape) for s, shape in zip((mean, var), output_shapes[1:])]
    return [y] + stats


def _weight_standardization(inputs, output_shapes, channel_axis=0, eps=1e-5):
    xhat, mean, var = standardize(inputs[0], [channel_axis], eps)
    return [xhat, mean, var]


def _norm_normalization(inputs, output_shapes, p=2, axes=None, eps=1e-12):
    x = inputs[0]
    p = 2 if p is None else p
    axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in _as_list(axes)]
    powered = x * x if p == 2 else F().abs(x) ** p
    norm = (F().sum(powered, axis=axes, keepdims=True) + eps) ** (1.0 / p)
    return [x / norm]


def _weight_normalization(inputs, output_shapes, dim=0, eps=1e-12):
    w, g = inputs
    dim %= w.ndim
    axes = [a for a in range(w.ndim) if a != dim]
    scale = (F().sum(w * w, axis=axes, keepdims=True) + eps) ** -0.5
    shape = [1] * w.ndim
    shape[dim] = w.shape[dim]
    return [w * scale * F().reshape(g, shape)]


def _layer_keep(ndim, batch_axis=0, **args):
    return _as_list(batch_axis)


def _instance_keep(ndim, channel_axis=1, batch_axis=0, **args):
    return _as_list(batch_axis) + [channel_axis]


def _tensor_keep(ndim, axes=(1,), **args):
    return _as_list(axes)


BACKWARDS = {
    "BatchNormalization": composite_backward(_batch_normalization, _bn_layout),
    "SyncBatchNormalization": composite_backward(_batch_normalization, _bn_layout),
    "FusedBatchNormalization": composite_backward(_fused_batch_normalization, _fused_layout),
    "LayerNormalization": composite_backward(_standardizing(_layer_keep), _scale_bias_layout),
    "InstanceNormalization": composite_backward(_standardizing(_instance_keep),
                                                _scale_bias_layout),
    "GroupNormalization": composite_backward(_group_normalization, _scale_bias_layout),
    "TensorNormalization": composite_backward(_standardizing(_tensor_keep), _scale_bias_layout),
    "WeightStandardization": composite_backward(_weight_standardization),
    "NormNormalization": composite_backward(_norm_normalization),
    "WeightNormalization": composite_backward(_weight_normalization),
}
