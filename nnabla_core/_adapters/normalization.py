"""``F.*`` normalization functions whose Python signature differs from the function type's.

``beta``/``gamma`` given as None become ``no_bias``/``no_scale``; ``output_stat``
asks for the batch mean and variance as two more outputs.
"""
from __future__ import annotations

import numbers

import numpy as np

from nnabla._adapters import axes_list as _list
from nnabla._dispatch import call_function
from nnabla._nd_array import NdArray
from nnabla._spec.args import adapter_args, check_value
from nnabla._variable import Variable

__all__ = ["batch_normalization", "fused_batch_normalization", "layer_normalization",
           "instance_normalization", "group_normalization", "tensor_normalization",
           "weight_standardization", "norm_normalization", "mean_subtraction",
           "clip_by_value", "clip_by_norm", "clip_grad_by_norm"]


def _n_outputs(output_stat):
    return 3 if output_stat else 1


def _constant(like, shape, value):
    """A constant of ``shape`` filled with ``value``, of the same kind as ``like``."""
    data = np.full(shape, value, np.float32)
    if isinstance(like, NdArray):
        return NdArray.from_numpy_array(data)
    return Variable.from_numpy_array(data, need_grad=False)


def _check_running(api, mean, variance, batch_stat):
    if not batch_stat and (mean is None or variance is None):
        raise ValueError(f"{api}: arguments 'mean' and 'variance' are None; expected the "
                         "running statistics when batch_stat=False")
    for name, v in (("mean", mean), ("variance", variance)):
        if batch_stat and getattr(v, "parent", None) is not None:
            raise ValueError(f"{api}: argument '{name}' has a parent function; expected a "
                             "leaf variable when batch_stat=True (it is updated in place)")


def batch_normalization(x, beta, gamma, mean, variance, axes=[1], decay_rate=0.9, eps=1e-05,
                        batch_stat=True, output_stat=False, n_outputs=None):
    """Batch normalization over every axis except ``axes``.

    ``y = (x - μ) / sqrt(σ² + eps) * gamma + beta`` with the batch mean and
    biased variance when ``batch_stat`` (the running ``mean``/``variance`` are
    then updated in place: ``r = decay_rate r + (1 - decay_rate) s``, with the
    unbiased variance), otherwise with the running statistics.

    Args:
        x (~nnabla.Variable): input.
        beta, gamma (~nnabla.Variable or None): bias and scale of shape x.shape with
            every axis outside ``axes`` set to 1; None omits them.
        mean, variance (~nnabla.Variable or None): running statistics (same shape).
        axes (int or list of int): the axes statistics are kept for (channels).
        decay_rate (float), eps (float), batch_stat (bool): see above.
        output_stat (bool): also return the batch mean and variance.
        n_outputs: ignored (nnabla derives it from ``output_stat``).

    Returns:
        ~nnabla.Variable, or ``(y, batch_mean, batch_var)`` with ``output_stat``.

    Raises:
        ValueError: if ``batch_stat`` is False and the running statistics are None,
            or ``output_stat`` is requested without ``batch_stat``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.array([[1.], [3.]], np.float32))
    >>> rm = nn.NdArray.from_numpy_array(np.zeros((1, 1), np.float32))
    >>> rv = nn.NdArray.from_numpy_array(np.ones((1, 1), np.float32))
    >>> y = F.batch_normalization(x, None, None, rm, rv, eps=0.0)
    >>> y.data.ravel().tolist(), rm.data.ravel().tolist()
    ([-1.0, 1.0], [0.20000000298023224])
    """
    api = "F.batch_normalization"
    if output_stat and not batch_stat:
        raise ValueError(f"{api}: argument 'output_stat' is True; expected False when "
                         "batch_stat=False (batch statistics are not computed)")
    _check_running(api, mean, variance, batch_stat)
    return call_function("BatchNormalization", x, beta, gamma, mean, variance,
                         axes=_list(axes), decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, no_scale=gamma is None, no_bias=beta is None,
                         n_outputs=_n_outputs(output_stat))


def fused_batch_normalization(x, beta, gamma, mean, variance, z=None, axes=[1], decay_rate=0.9,
                              eps=1e-05, batch_stat=True, nonlinearity='relu',
                              output_stat=False, n_outputs=None):
    """``relu(batch_normalization(x) + z)`` in one function; ``z`` is optional.

    Arguments as :func:`batch_normalization`; ``nonlinearity`` must be ``'relu'``.
    beta/gamma given as None act as 0 and 1.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.array([[1.], [3.]], np.float32))
    >>> rm = nn.NdArray.from_numpy_array(np.zeros((1, 1), np.float32))
    >>> rv = nn.NdArray.from_numpy_array(np.ones((1, 1), np.float32))
    >>> F.fused_batch_normalization(x, None, None, rm, rv, eps=0.0).data.ravel().tolist()
    [0.0, 1.0]
    """
    api = "F.fused_batch_normalization"
    _check_running(api, mean, variance, batch_stat)
    axes = adapter_args("fused_batch_normalization", axes=_list(axes))
    shape = tuple(s if i in [a % len(x.shape) for a in axes] else 1
                  for i, s in enumerate(x.shape))
    beta = _constant(x, shape, 0.0) if beta is None else beta
    gamma = _constant(x, shape, 1.0) if gamma is None else gamma
    mean = _constant(x, shape, 0.0) if mean is None else mean
    variance = _constant(x, shape, 1.0) if variance is None else variance
    return call_function("FusedBatchNormalization", x, beta, gamma, mean, variance, z,
                         axes=axes, decay_rate=decay_rate, eps=eps, batch_stat=batch_stat,
                         nonlinearity=nonlinearity, n_outputs=_n_outputs(output_stat))


def layer_normalization(x, beta, gamma, batch_axis=0, eps=1e-05, output_stat=False):
    """Normalise each sample over every axis but ``batch_axis``; ``y = x̂ gamma + beta``.

    beta/gamma have x's shape with the batch axes set to 1 (None omits them);
    the statistics (``output_stat``) have size 1 off the batch axes.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.array([[1., 3.], [2., 6.]], np.float32))
    >>> F.layer_normalization(x, None, None, eps=0.0).data.tolist()
    [[-1.0, 1.0], [-1.0, 1.0]]
    """
    return call_function("LayerNormalization", x, beta, gamma, batch_axis=_list(batch_axis),
                         eps=eps, no_scale=gamma is None, no_bias=beta is None,
                         n_outputs=_n_outputs(output_stat))


def instance_normalization(x, beta, gamma, channel_axis=1, batch_axis=0, eps=1e-05,
                           output_stat=False):
    """Normalise each (sample, channel) over the remaining axes.

    beta/gamma broadcast to x's shape with only batch and channel axes kept.
    """
    return call_function("InstanceNormalization", x, beta, gamma, channel_axis=channel_axis,
                         batch_axis=_list(batch_axis), eps=eps, no_scale=gamma is None,
                         no_bias=beta is None, n_outputs=_n_outputs(output_stat))


def group_normalization(x, beta, gamma, num_groups, channel_axis=1, batch_axis=0, eps=1e-05,
                        output_stat=False):
    """Normalise each (sample, group of ``C / num_groups`` channels); per-channel affine.

    Raises:
        ValueError: if the channel count is not a multiple of ``num_groups``.
    """
    return call_function("GroupNormalization", x, beta, gamma, num_groups=num_groups,
                         channel_axis=channel_axis, batch_axis=_list(batch_axis), eps=eps,
                         no_scale=gamma is None, no_bias=beta is None,
                         n_outputs=_n_outputs(output_stat))


def tensor_normalization(x, axes, beta=None, gamma=None, eps=1e-05, output_stat=False):
    """Normalise with x's own statistics over every axis except ``axes``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.array([[1., 3.], [3., 5.]], np.float32))
    >>> F.tensor_normalization(x, 1, eps=0.0).data.tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    return call_function("TensorNormalization", x, beta, gamma, axes=_list(axes), eps=eps,
                         no_scale=gamma is None, no_bias=beta is None,
                         n_outputs=_n_outputs(output_stat))


def weight_standardization(w, channel_axis=0, eps=1e-05, output_stat=False):
    """Standardise ``w`` to mean 0 and variance 1 per index of ``channel_axis``."""
    return call_function("WeightStandardization", w, channel_axis=channel_axis, eps=eps,
                         n_outputs=_n_outputs(output_stat))


def norm_normalization(x, p=None, axes=None, eps=1e-12):
    """``y = x / (sum_{axes} |x|^p + eps)^(1/p)``; p None means 2, axes None every axis."""
    axes = list(range(len(x.shape))) if axes is None else _list(axes)
    p = 2.0 if p is None else check_value("F.norm_normalization", "p", "float", p)
    return call_function("NormNormalization", x, p=p, axes=axes, eps=eps)


def mean_subtraction(x, mean, t, base_axis=1, update_running_mean=True):
    """``y = x - running mean``; in training the running mean ``mean`` and count ``t``
    are updated in place (cumulative average over the batches seen)."""
    return call_function("MeanSubtraction", x, mean, t, base_axis=base_axis,
                         update_running_mean=update_running_mean)


def clip_by_value(x, min, max):  # noqa: A002 - nnabla's argument names
    """Clip ``x`` element-wise to ``[min, max]`` (scalars or arrays of x's rank).

    Raises:
        TypeError: if min or max is neither a scalar nor a Variable/NdArray.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.array([-2., 0.5, 3.], np.float32))
    >>> F.clip_by_value(x, -1, 1).data.tolist()
    [-1.0, 0.5, 1.0]
    """
    for name, v in (("min", min), ("max", max)):
        if not (isinstance(v, numbers.Real) or isinstance(v, (Variable, NdArray))):
            raise TypeError(f"F.clip_by_value: argument '{name}' is of type "
                            f"{type(v).__name__}; expected a number, Variable or NdArray")
    if isinstance(min, numbers.Real):
        y = call_function("MaximumScalar", x, val=float(min))
    else:
        y = call_function("Maximum2", x, min)
    if isinstance(max, numbers.Real):
        return call_function("MinimumScalar", y, val=float(max))
    return call_function("Minimum2", y, max)


def clip_by_norm(x, clip_norm, axis=None):
    """Rescale ``x`` so that its L2 norm over ``axis`` is at most ``clip_norm``:
    ``y = x * clip_norm / max(||x||, clip_norm)``.

    Raises:
        ValueError: if a scalar ``clip_norm`` is not positive.
    """
    api = "F.clip_by_norm"
    if not isinstance(clip_norm, (Variable, NdArray)):
        clip_norm = check_value(api, "clip_norm", "float", clip_norm)
    axes = check_value(api, "axis", "ints", list(range(len(x.shape))) if axis is None else
                       _list(axis))
    sq = call_function("PowScalar", x, val=2.0)
    norm = call_function("PowScalar", call_function("Sum", sq, axes=axes, keep_dims=True),
                         val=0.5)
    if isinstance(clip_norm, (Variable, NdArray)):
        denominator = call_function("Maximum2", norm, clip_norm)
        return call_function("Div2", call_function("Mul2", x, clip_norm), denominator)
    if clip_norm <= 0:
        raise ValueError(f"F.clip_by_norm: argument 'clip_norm' is {clip_norm!r}; "
                         "expected a positive value")
    denominator = call_function("MaximumScalar", norm, val=float(clip_norm))
    return call_function("Div2", call_function("MulScalar", x, val=float(clip_norm)),
                         denominator)


def clip_grad_by_norm(x, clip_norm=None, axes=None, n_outputs=-1, outputs=None):
    """Identity forward; backward rescales the gradient to L2 norm ``clip_norm``
    over ``axes`` (None: every axis): ``g_x = clip_norm * g_y / ||g_y||``.

    ``clip_norm`` None means 1.0, as in nnabla.
    """
    return call_function("ClipGradByNorm", x, clip_norm=1.0 if clip_norm is None else clip_norm,
                         axes=None if axes is None else _list(axes), n_outputs=n_outputs,
                         outputs=outputs)
