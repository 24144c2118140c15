"""Parametric quantized and pruned affine/convolution layers, and ``min_max_quantize``.

Each layer keeps float parameters ``W``/``b`` (trainable) and, when quantization (or
pruning) of that parameter is on, a companion ``W_q``/``b_q`` registered with
``need_grad=False``. The companion is drawn with the same initializer right after its
float parameter (so under ``nn.seed`` the order of draws is ``W``, ``W_q``, then ``b``,
``b_q``, as in nnabla) and is overwritten by the quantizer's forward pass: it is the
quantizer's output array, so it holds the quantized values after the first forward.

The layers reproduce nnabla 1.39 shape for shape, including its uneven handling of
``channel_last`` in the convolutions (noted on each function).
"""

import numpy as np

from .. import functions as F
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .._nd_array import NdArray
from .._variable import Variable
from ..parameter import get_parameter_or_create
from .api import as_list, flat_size, get_or_create, parametric_function_api


def _output_arrays(x, outputs):
    """``outputs`` for an ``F`` call on ``x``, with graph-mode NdArrays made Variables.

    nnabla takes the arrays a function writes into as NdArrays in both modes. Our graph
    builder takes a Variable there, so an NdArray is wrapped in a fresh Variable sharing
    its data (only the data is shared; the gradient stays separate, as in nnabla).
    """
    if outputs is None or isinstance(x, NdArray):
        return outputs
    converted = []
    for array in outputs:
        if isinstance(array, NdArray):
            holder = Variable(array.shape, need_grad=x.need_grad)
            holder.data = array
            array = holder
        converted.append(array)
    return converted


def _companion(name, shape, initializer, value, quantizer):
    """Creates ``name`` (need_grad=False) and returns ``quantizer(value)`` written into it."""
    stored = get_parameter_or_create(name, shape, initializer, False)
    quantized = quantizer(value, _output_arrays(value, [stored.data]))
    quantized.persistent = True
    return quantized


def _parameters(w_shape, q_shape, b_shape, w_init, b_init, fix_parameters, with_bias,
                w_quantizer, b_quantizer):
    """``W``, ``W_q``, ``b``, ``b_q`` in nnabla's order; a quantizer of None skips ``_q``.

    Returns:
        tuple: The weight and bias (or None) that the layer computes with.
    """
    w = get_or_create("W", w_shape, w_init, fix_parameters)
    if w_quantizer is not None:
        w = _companion("W_q", q_shape, w_init, w, w_quantizer)
    if not with_bias:
        return w, None
    b_init = b_init if b_init is not None else ConstantInitializer()
    b = get_or_create("b", b_shape, b_init, fix_parameters)
    if b_quantizer is not None:
        b = _companion("b_q", b_shape, b_init, b, b_quantizer)
    return w, b


def _affine_shapes(inp, n_outmaps, base_axis, w_init, rng):
    """Weight shape, bias shape and default-filled ``w_init`` of an affine layer."""
    n_outmaps = as_list(n_outmaps)
    inmaps = flat_size(inp.shape[base_axis:])
    if w_init is None:
        w_init = UniformInitializer(
            calc_uniform_lim_glorot(inmaps, flat_size(n_outmaps)), rng=rng)
    return [inmaps] + n_outmaps, n_outmaps, w_init


def _conv_filters(inp, outmaps, kernel, group, channel_last, base_axis, w_init, rng):
    """``(outmaps, *filter)`` honouring ``channel_last``, the same shape read at
    ``base_axis`` (nnabla uses each in places), and the default-filled ``w_init``."""
    kernel = tuple(kernel)
    if channel_last:
        channels = inp.shape[-1]
        filters = (outmaps,) + kernel + (channels // group,)
    else:
        channels = inp.shape[base_axis]
        filters = (outmaps, channels // group) + kernel
    at_base_axis = (outmaps, inp.shape[base_axis] // group) + kernel
    if w_init is None:
        w_init = UniformInitializer(calc_uniform_lim_glorot(channels, outmaps, kernel), rng=rng)
    return filters, at_base_axis, w_init


def _fixed_point(enabled, sign, n, delta, ste_fine_grained):
    if not enabled:
        return None
    return lambda value, outputs: F.fixed_point_quantize(
        value, quantize=True, sign=sign, n=n, delta=delta,
        ste_fine_grained=ste_fine_grained, outputs=outputs)


def _pow2(enabled, sign, with_zero, n, m, ste_fine_grained):
    if not enabled:
        return None
    return lambda value, outputs: F.pow2_quantize(
        value, quantize=True, sign=sign, with_zero=with_zero, n=n, m=m,
        ste_fine_grained=ste_fine_grained, outputs=outputs)


def _prune(enabled, rate):
    if not enabled:
        return None
    return lambda value, outputs: F.prune(value, rate=rate, outputs=outputs)


def _min_max(enabled, scope, ql_min, ql_max, min_max, qr_min_init, qr_max_init,
             ste_fine_grained, eps, fix_parameters):
    if not enabled:
        return None
    return lambda value, outputs: min_max_quantize(
        value, ql_min, ql_max, 0.999, min_max, False, qr_min_init=qr_min_init,
        qr_max_init=qr_max_init, ste_fine_grained=ste_fine_grained, eps=eps,
        fix_parameters=fix_parameters, outputs=outputs, name=scope)


_AFFINE_PARAMS = [
    ("W", "Weight matrix in float", "(inmaps, outmaps)", True),
    ("b", "Bias vector in float", "(outmaps,)", True),
    ("W_q", "Quantized weights", "(inmaps, outmaps)", False),
    ("b_q", "Quantized biases", "(outmaps,)", False)]
_CONV_PARAMS = [
    ("W", "Filter weights in float", "(outmaps, inmaps // group, *kernel)", True),
    ("b", "Bias vector in float", "(outmaps,)", True),
    ("W_q", "Quantized weights", "(outmaps, inmaps // group, *kernel)", False),
    ("b_q", "Quantized biases", "(outmaps,)", False)]
_MIN_MAX_RANGES = [
    ("qr_min", "Minimum quantization range", "ql_min.shape", False),
    ("qr_max", "Maximum quantization range", "ql_max.shape", False)]


@parametric_function_api("fp_quantized_affine", _AFFINE_PARAMS)
def fixed_point_quantized_affine(inp, n_outmaps, base_axis=1, w_init=None, b_init=None,
                                 fix_parameters=False, rng=None, with_bias=True,
                                 quantize_w=True, sign_w=True, n_w=8, delta_w=2**-4,
                                 ste_fine_grained_w=True, quantize_b=True, sign_b=True,
                                 n_b=8, delta_b=2**-4, ste_fine_grained_b=True):
    """Affine layer computing with fixed-point quantized weights and bias.

    ``y = x Q(W) + Q(b)`` where ``Q`` is ``F.fixed_point_quantize`` (``n`` bits, step
    ``delta``); gradients reach the float ``W`` and ``b`` through the straight-through
    estimator. ``W_q``/``b_q`` hold ``Q(W)``/``Q(b)`` after a forward pass.

    Args:
        inp (nnabla.Variable): Input, flattened from ``base_axis`` on.
        n_outmaps (int or tuple of int): Output neurons per sample.
        base_axis (int): First flattened axis.
        w_init, b_init (initializer or numpy.ndarray, optional): Glorot uniform / zeros.
        fix_parameters (bool): If True, ``W`` and ``b`` are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the default initializer.
        with_bias (bool): Whether a bias is used.
        quantize_w, quantize_b (bool): Quantize the weight / the bias.
        sign_w, sign_b (bool): Signed quantization.
        n_w, n_b (int): Bit widths.
        delta_w, delta_b (float): Step sizes.
        ste_fine_grained_w, ste_fine_grained_b (bool): Zero gradient outside the range.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> PF.fixed_point_quantized_affine(nn.Variable((2, 6)), 3).shape
        (2, 3)
        >>> sorted(nn.get_parameters(grad_only=False))
        ['fp_quantized_affine/W', 'fp_quantized_affine/W_q', 'fp_quantized_affine/b', \
'fp_quantized_affine/b_q']
        >>> nn.clear_parameters()
    """
    w_shape, b_shape, w_init = _affine_shapes(inp, n_outmaps, base_axis, w_init, rng)
    w, b = _parameters(
        w_shape, w_shape, b_shape, w_init, b_init, fix_parameters, with_bias,
        _fixed_point(quantize_w, sign_w, n_w, delta_w, ste_fine_grained_w),
        _fixed_point(quantize_b, sign_b, n_b, delta_b, ste_fine_grained_b))
    return F.affine(inp, w, b, base_axis)


@parametric_function_api("fp_quantized_conv", _CONV_PARAMS)
def fixed_point_quantized_convolution(inp, outmaps, kernel, pad=None, stride=None,
                                      dilation=None, group=1, channel_last=False, w_init=None,
                                      b_init=None, base_axis=1, fix_parameters=False, rng=None,
                                      with_bias=True, quantize_w=True, sign_w=True, n_w=8,
                                      delta_w=2**-4, ste_fine_grained_w=True, quantize_b=True,
                                      sign_b=True, n_b=8, delta_b=2**-4,
                                      ste_fine_grained_b=True):
    """Convolution computing with fixed-point quantized filters and bias.

    Arguments as in :func:`fixed_point_quantized_affine` plus the convolution's. As in
    nnabla 1.39, ``channel_last`` only changes the Glorot limit and the shape of ``W_q``:
    ``W`` is ``(outmaps, inp.shape[base_axis] // group, *kernel)`` and the convolution is
    called without ``channel_last``.

    Returns:
        nnabla.Variable: The output of ``F.convolution``.
    """
    filters, at_base_axis, w_init = _conv_filters(inp, outmaps, kernel, group, channel_last,
                                                  base_axis, w_init, rng)
    w, b = _parameters(
        at_base_axis, filters, (outmaps,), w_init, b_init, fix_parameters, with_bias,
        _fixed_point(quantize_w, sign_w, n_w, delta_w, ste_fine_grained_w),
        _fixed_point(quantize_b, sign_b, n_b, delta_b, ste_fine_grained_b))
    return F.convolution(inp, w, b, base_axis, pad, stride, dilation, group)


@parametric_function_api("pow2_quantized_affine", _AFFINE_PARAMS)
def pow2_quantized_affine(inp, n_outmaps, base_axis=1, w_init=None, b_init=None,
                          fix_parameters=False, rng=None, with_bias=True, quantize_w=True,
                          sign_w=True, with_zero_w=False, n_w=8, m_w=2, ste_fine_grained_w=True,
                          quantize_b=True, sign_b=True, with_zero_b=False, n_b=8, m_b=2,
                          ste_fine_grained_b=True):
    """Affine layer computing with power-of-two quantized weights and bias.

    ``Q`` is ``F.pow2_quantize`` (``n`` bits, values bounded by ``2**m``, zero allowed when
    ``with_zero``); other arguments as in :func:`fixed_point_quantized_affine`.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    w_shape, b_shape, w_init = _affine_shapes(inp, n_outmaps, base_axis, w_init, rng)
    w, b = _parameters(
        w_shape, w_shape, b_shape, w_init, b_init, fix_parameters, with_bias,
        _pow2(quantize_w, sign_w, with_zero_w, n_w, m_w, ste_fine_grained_w),
        _pow2(quantize_b, sign_b, with_zero_b, n_b, m_b, ste_fine_grained_b))
    return F.affine(inp, w, b, base_axis)


@parametric_function_api("pow2_quantized_conv", _CONV_PARAMS)
def pow2_quantized_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None,
                               group=1, w_init=None, b_init=None, base_axis=1,
                               fix_parameters=False, rng=None, with_bias=True, quantize_w=True,
                               with_zero_w=False, sign_w=True, n_w=8, m_w=2,
                               ste_fine_grained_w=True, quantize_b=True, with_zero_b=False,
                               sign_b=True, n_b=8, m_b=2, ste_fine_grained_b=True):
    """Convolution computing with power-of-two quantized filters and bias.

    Arguments as in :func:`pow2_quantized_affine` plus the convolution's (no
    ``channel_last``, as in nnabla).

    Returns:
        nnabla.Variable: The output of ``F.convolution``.
    """
    _, filters, w_init = _conv_filters(inp, outmaps, kernel, group, False, base_axis,
                                       w_init, rng)
    w, b = _parameters(
        filters, filters, (outmaps,), w_init, b_init, fix_parameters, with_bias,
        _pow2(quantize_w, sign_w, with_zero_w, n_w, m_w, ste_fine_grained_w),
        _pow2(quantize_b, sign_b, with_zero_b, n_b, m_b, ste_fine_grained_b))
    return F.convolution(inp, w, b, base_axis, pad, stride, dilation, group)


@parametric_function_api("pruned_affine", _AFFINE_PARAMS)
def pruned_affine(inp, n_outmaps, base_axis=1, w_init=None, b_init=None,
                  fix_parameters=False, rng=None, with_bias=True, prune_w=True, rate_w=0.9,
                  prune_b=True, rate_b=0.9):
    """Affine layer computing with pruned weights and bias (``F.prune``).

    The fraction ``rate`` of the elements smallest in magnitude is zeroed in the forward
    pass; ``W_q``/``b_q`` hold the pruned values. Other arguments as in
    :func:`fixed_point_quantized_affine`.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    w_shape, b_shape, w_init = _affine_shapes(inp, n_outmaps, base_axis, w_init, rng)
    w, b = _parameters(w_shape, w_shape, b_shape, w_init, b_init, fix_parameters, with_bias,
                       _prune(prune_w, rate_w), _prune(prune_b, rate_b))
    return F.affine(inp, w, b, base_axis)


@parametric_function_api("pruned_conv", _CONV_PARAMS)
def pruned_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                       channel_last=False, w_init=None, b_init=None, base_axis=1,
                       fix_parameters=False, rng=None, with_bias=True, prune_w=True,
                       rate_w=0.9, prune_b=True, rate_b=0.9):
    """Convolution computing with pruned filters and bias (``F.prune``).

    As in nnabla 1.39, ``W`` follows ``channel_last`` but ``W_q`` is always
    ``(outmaps, inp.shape[base_axis] // group, *kernel)``.

    Returns:
        nnabla.Variable: The output of ``F.convolution``.
    """
    filters, at_base_axis, w_init = _conv_filters(inp, outmaps, kernel, group, channel_last,
                                                  base_axis, w_init, rng)
    w, b = _parameters(filters, at_base_axis, (outmaps,), w_init, b_init, fix_parameters,
                       with_bias, _prune(prune_w, rate_w), _prune(prune_b, rate_b))
    return F.convolution(inp, w, b, base_axis, pad, stride, dilation, group, channel_last)


def _level_parameter(name, level, ndim):
    """A quantization level given as a number becomes a fixed ``(1,) * ndim`` parameter."""
    if not isinstance(level, (int, float)):
        return level
    shape = [1] * ndim
    return get_parameter_or_create(name, shape, np.array(level).reshape(shape), False, False)


@parametric_function_api("min_max_quantize", _MIN_MAX_RANGES)
def min_max_quantize(x, ql_min=0, ql_max=255, decay=0.999, x_min_max=False, ema=False,
                     ste_fine_grained=True, eps=0.01, qr_min_init=None, qr_max_init=None,
                     fix_parameters=False, outputs=None):
    """Min-max quantization of ``x`` with a registered quantization range.

    Numbers given as ``ql_min``/``ql_max`` become parameters ``ql_min``/``ql_max`` of
    shape ``(1,) * x.ndim``. The range ``qr_min``/``qr_max`` (default -6 and 6) has their
    shape; it is registered with ``need_grad=False`` when ``x_min_max`` and ``ema`` (then
    ``F.min_max_quantize`` updates it by moving average), else it is trainable.

    Args:
        x (nnabla.Variable): Input.
        ql_min, ql_max (int, float or nnabla.Variable): Quantization levels.
        decay (float): Moving-average decay.
        x_min_max (bool): Use the min and max of ``x`` for the range.
        ema (bool): Update the range by exponential moving average.
        ste_fine_grained (bool): Zero gradient outside the range.
        eps (float): Minimum width of the range.
        qr_min_init, qr_max_init (initializer or numpy.ndarray, optional): Range initializers.
        fix_parameters (bool): If True, the range is returned with need_grad=False.
        outputs (list of nnabla.NdArray, optional): Arrays the result is written into.

    Returns:
        nnabla.Variable: The quantized ``x``.
    """
    ql_min = _level_parameter("ql_min", ql_min, x.ndim)
    ql_max = _level_parameter("ql_max", ql_max, x.ndim)
    qr_min_init = qr_min_init if qr_min_init is not None else ConstantInitializer(-6.0)
    qr_max_init = qr_max_init if qr_max_init is not None else ConstantInitializer(6.0)
    trainable = not (x_min_max and ema)
    qr_min = get_parameter_or_create("qr_min", ql_min.shape, qr_min_init, trainable,
                                     not fix_parameters)
    qr_max = get_parameter_or_create("qr_max", ql_min.shape, qr_max_init, trainable,
                                     not fix_parameters)
    return F.min_max_quantize(x, qr_min, qr_max, ql_min, ql_max, decay, x_min_max, ema,
                              ste_fine_grained, eps, outputs=_output_arrays(x, outputs))


def _range_inits(qr_min_w_init, qr_max_w_init, qr_min_b_init, qr_max_b_init):
    """nnabla's default ranges: (-2, 2) for weights, (-6, 6) for biases."""
    def given_or(init, value):
        return init if init is not None else ConstantInitializer(value)

    return (given_or(qr_min_w_init, -2.0), given_or(qr_max_w_init, 2.0),
            given_or(qr_min_b_init, -6.0), given_or(qr_max_b_init, 6.0))


@parametric_function_api("min_max_quantized_affine", _AFFINE_PARAMS + _MIN_MAX_RANGES)
def min_max_quantized_affine(inp, n_outmaps, base_axis=1, w_init=None, b_init=None,
                             fix_parameters=False, rng=None, with_bias=True, quantize_w=True,
                             ql_min_w=0, ql_max_w=255, w_min_max=False, qr_min_w_init=None,
                             qr_max_w_init=None, ste_fine_grained_w=True, quantize_b=True,
                             ql_min_b=0, ql_max_b=255, b_min_max=False, qr_min_b_init=None,
                             qr_max_b_init=None, ste_fine_grained_b=True, eps=0.01):
    """Affine layer computing with min-max quantized weights and bias.

    Each quantized parameter goes through :func:`min_max_quantize` under the scope
    ``min_max_quantize_w`` / ``min_max_quantize_b`` (ranges default to (-2, 2) for the
    weight, (-6, 6) for the bias; ``*_min_max`` uses the parameter's own min and max).

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    w_shape, b_shape, w_init = _affine_shapes(inp, n_outmaps, base_axis, w_init, rng)
    qr_min_w, qr_max_w, qr_min_b, qr_max_b = _range_inits(
        qr_min_w_init, qr_max_w_init, qr_min_b_init, qr_max_b_init)
    w, b = _parameters(
        w_shape, w_shape, b_shape, w_init, b_init, fix_parameters, with_bias,
        _min_max(quantize_w, "min_max_quantize_w", ql_min_w, ql_max_w, w_min_max, qr_min_w,
                 qr_max_w, ste_fine_grained_w, eps, fix_parameters),
        _min_max(quantize_b, "min_max_quantize_b", ql_min_b, ql_max_b, b_min_max, qr_min_b,
                 qr_max_b, ste_fine_grained_b, eps, fix_parameters))
    return F.affine(inp, w, b, base_axis)


@parametric_function_api("min_max_quantized_conv", _CONV_PARAMS + _MIN_MAX_RANGES)
def min_max_quantized_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None,
                                  group=1, channel_last=False, w_init=None, b_init=None,
                                  base_axis=1, fix_parameters=False, rng=None, with_bias=True,
                                  quantize_w=True, ql_min_w=0, ql_max_w=255, w_min_max=False,
                                  qr_min_w_init=None, qr_max_w_init=None,
                                  ste_fine_grained_w=True, quantize_b=True, ql_min_b=0,
                                  ql_max_b=255, b_min_max=False, qr_min_b_init=None,
                                  qr_max_b_init=None, ste_fine_grained_b=True, eps=0.01):
    """Convolution computing with min-max quantized filters and bias.

    Arguments as in :func:`min_max_quantized_affine` plus the convolution's.

    Returns:
        nnabla.Variable: The output of ``F.convolution``.
    """
    filters, _, w_init = _conv_filters(inp, outmaps, kernel, group, channel_last, base_axis,
                                       w_init, rng)
    qr_min_w, qr_max_w, qr_min_b, qr_max_b = _range_inits(
        qr_min_w_init, qr_max_w_init, qr_min_b_init, qr_max_b_init)
    w, b = _parameters(
        filters, filters, (outmaps,), w_init, b_init, fix_parameters, with_bias,
        _min_max(quantize_w, "min_max_quantize_w", ql_min_w, ql_max_w, w_min_max, qr_min_w,
                 qr_max_w, ste_fine_grained_w, eps, fix_parameters),
        _min_max(quantize_b, "min_max_quantize_b", ql_min_b, ql_max_b, b_min_max, qr_min_b,
                 qr_max_b, ste_fine_grained_b, eps, fix_parameters))
    return F.convolution(inp, w, b, base_axis, pad, stride, dilation, group, channel_last)
