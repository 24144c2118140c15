"""Parametric affine, convolution, embedding and PReLU layers.

Default weights are ``UniformInitializer(calc_uniform_lim_glorot(...), rng)`` drawn once,
when the weight is created, so under ``nn.seed(s)`` they equal
``np.random.RandomState(s).uniform(-lim, lim, shape)`` in call order; biases start at 0.
"""

from .. import functions as F
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .api import as_list, flat_size, get_or_create, parametric_function_api


def _weight_and_bias(w_shape, w_init, b_shape, b_init, fix_parameters, with_bias,
                     apply_w=None, apply_b=None):
    """Creates (or fetches) ``W`` then ``b`` and applies the optional transforms."""
    w = get_or_create("W", w_shape, w_init, fix_parameters)
    if apply_w is not None:
        w = apply_w(w)
    b = None
    if with_bias:
        if b_init is None:
            b_init = ConstantInitializer()
        b = get_or_create("b", b_shape, b_init, fix_parameters)
        if apply_b is not None:
            b = apply_b(b)
    return w, b


def _glorot(inmaps, outmaps, kernel, rng):
    return UniformInitializer(calc_uniform_lim_glorot(inmaps, outmaps, tuple(kernel)), rng=rng)


def _conv_parameters(inp, outmaps, kernel, base_axis, group, channel_last, w_init, b_init,
                     fix_parameters, rng, with_bias, apply_w, apply_b):
    """``W`` (outmaps, C/group, *kernel) or channel-last, and ``b`` of a convolution layer."""
    channels = inp.shape[-1] if channel_last else inp.shape[base_axis]
    if channel_last:
        filter_shape = tuple(kernel) + (channels // group,)
    else:
        filter_shape = (channels // group,) + tuple(kernel)
    if w_init is None:
        w_init = _glorot(channels, outmaps, kernel, rng)
    return _weight_and_bias((outmaps,) + filter_shape, w_init, (outmaps,), b_init,
                            fix_parameters, with_bias, apply_w, apply_b)


@parametric_function_api("affine", [
    ("W", "Weight matrix", "(inmaps, outmaps)", True), ("b", "Bias", "(outmaps,)", True)])
def affine(inp, n_outmaps, base_axis=1, w_init=None, b_init=None, fix_parameters=False,
           rng=None, with_bias=True, apply_w=None, apply_b=None):
    """Fully connected layer: ``y = x W + b`` with ``x`` flattened from ``base_axis`` on.

    Args:
        inp (nnabla.Variable): Input; axes before ``base_axis`` are sample axes.
        n_outmaps (int or tuple of int): Output neurons per sample.
        base_axis (int): First axis that is flattened into the input vector.
        w_init (initializer or numpy.ndarray, optional): Weight initializer; default
            uniform with the Glorot limit of (prod(inp.shape[base_axis:]), prod(n_outmaps)).
        b_init (initializer or numpy.ndarray, optional): Bias initializer; default 0.
        fix_parameters (bool): If True, the returned parameters have need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the default initializer.
        with_bias (bool): Whether a bias ``b`` is used.
        apply_w (callable, optional): Applied to the weight before use.
        apply_b (callable, optional): Applied to the bias before use.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    n_outmaps = as_list(n_outmaps)
    inmaps = flat_size(inp.shape[base_axis:])
    if w_init is None:
        w_init = _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng)
    w, b = _weight_and_bias([inmaps] + n_outmaps, w_init, n_outmaps, b_init, fix_parameters,
                            with_bias, apply_w, apply_b)
    return F.affine(inp, w, b, base_axis=base_axis)


@parametric_function_api("conv", [
    ("W", "Filter weights", "(outmaps, inmaps // group, *kernel)", True),
    ("b", "Bias", "(outmaps,)", True)])
def convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                channel_last=False, w_init=None, b_init=None, base_axis=1,
                fix_parameters=False, rng=None, with_bias=True, apply_w=None, apply_b=None):
    """N-D convolution with a bias term.

    Args:
        inp (nnabla.Variable): Input, channels at ``base_axis`` (last if ``channel_last``).
        outmaps (int): Number of output channels.
        kernel (tuple of int): Kernel spatial shape.
        pad, stride, dilation (tuple of int, optional): As in ``F.convolution``.
        group (int): Channel groups.
        channel_last (bool): Channels are the last axis (weights ``(outmaps, *kernel,
            inmaps // group)``).
        w_init, b_init (initializer or numpy.ndarray, optional): Default Glorot uniform
            with (inmaps, outmaps, kernel) for ``W``, zeros for ``b``.
        base_axis (int): First non-sample axis.
        fix_parameters (bool): If True, the returned parameters have need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of the default initializer.
        with_bias (bool): Whether a bias is used.
        apply_w, apply_b (callable, optional): Applied to the parameters before use.

    Returns:
        nnabla.Variable: The output of ``F.convolution``.
    """
    w, b = _conv_parameters(inp, outmaps, kernel, base_axis, group, channel_last, w_init,
                            b_init, fix_parameters, rng, with_bias, apply_w, apply_b)
    return F.convolution(inp, w, b, base_axis=base_axis, pad=pad, stride=stride,
                         dilation=dilation, group=group, channel_last=channel_last)


@parametric_function_api("deconv", [
    ("W", "Filter weights", "(inmaps, outmaps // group, *kernel)", True),
    ("b", "Bias", "(outmaps,)", True)])
def deconvolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                  channel_last=False, output_padding=None, w_init=None, b_init=None,
                  base_axis=1, fix_parameters=False, rng=None, with_bias=True, apply_w=None,
                  apply_b=None):
    """N-D deconvolution (transposed convolution) with a bias term.

    Arguments are those of :func:`convolution` plus ``output_padding``; the default
    weight limit is Glorot with (outmaps, inmaps, kernel).

    Returns:
        nnabla.Variable: The output of ``F.deconvolution``.
    """
    channels = inp.shape[-1] if channel_last else inp.shape[base_axis]
    if channel_last:
        w_shape = (channels,) + tuple(kernel) + (outmaps // group,)
    else:
        w_shape = (channels, outmaps // group) + tuple(kernel)
    if w_init is None:
        w_init = _glorot(outmaps, channels, kernel, rng)
    w, b = _weight_and_bias(w_shape, w_init, (outmaps,), b_init, fix_parameters, with_bias,
                            apply_w, apply_b)
    return F.deconvolution(inp, w, b, base_axis=base_axis, pad=pad, stride=stride,
                           dilation=dilation, group=group, channel_last=channel_last,
                           output_padding=output_padding)


@parametric_function_api("depthwise_conv", [
    ("W", "Filter weights", "(inmaps * multiplier, *kernel)", True),
    ("b", "Bias", "(inmaps * multiplier,)", True)])
def depthwise_convolution(inp, kernel, pad=None, stride=None, dilation=None, multiplier=1,
                          w_init=None, b_init=None, base_axis=1, fix_parameters=False,
                          rng=None, with_bias=True):
    """N-D depthwise convolution with a bias term.

    Each input channel gets ``multiplier`` filters; the default weight limit is Glorot
    with (inmaps * multiplier, inmaps, kernel). Other arguments as in :func:`convolution`.

    Returns:
        nnabla.Variable: The output of ``F.depthwise_convolution``.
    """
    channels = inp.shape[base_axis]
    if w_init is None:
        w_init = _glorot(channels * multiplier, channels, kernel, rng)
    out_channels = (channels * multiplier,)
    w, b = _weight_and_bias(out_channels + tuple(kernel), w_init, out_channels, b_init,
                            fix_parameters, with_bias)
    return F.depthwise_convolution(inp, w, b, base_axis=base_axis, pad=pad, stride=stride,
                                   dilation=dilation, multiplier=multiplier)


@parametric_function_api("depthwise_deconv", [
    ("W", "Filter weights", "(inmaps, *kernel)", True),
    ("b", "Bias", "(inmaps // divisor,)", True)])
def depthwise_deconvolution(inp, kernel, pad=None, stride=None, dilation=None, divisor=1,
                            w_init=None, b_init=None, base_axis=1, fix_parameters=False,
                            rng=None, with_bias=True):
    """N-D depthwise deconvolution with a bias term.

    The default weight limit is Glorot with (inmaps, inmaps, kernel); the bias has
    ``inmaps // divisor`` elements. Other arguments as in :func:`convolution`.

    Returns:
        nnabla.Variable: The output of ``F.depthwise_deconvolution``.
    """
    channels = inp.shape[base_axis]
    if w_init is None:
        w_init = _glorot(channels, channels, kernel, rng)
    w, b = _weight_and_bias((channels,) + tuple(kernel), w_init, (channels // divisor,),
                            b_init, fix_parameters, with_bias)
    return F.depthwise_deconvolution(inp, w, b, base_axis=base_axis, pad=pad, stride=stride,
                                     dilation=dilation, divisor=divisor)


@parametric_function_api("deformable_conv", [
    ("W", "Filter weights", "(outmaps, inmaps // group, *kernel)", True),
    ("b", "Bias", "(outmaps,)", True)])
def deformable_convolution(inp, outmaps, kernel, offset, mask=None, pad=None, stride=None,
                           dilation=None, group=1, deformable_group=1, channel_last=False,
                           w_init=None, b_init=None, base_axis=1, fix_parameters=False,
                           rng=None, with_bias=True, apply_w=None, apply_b=None):
    """2-D deformable convolution with a bias term.

    ``offset`` (and optional ``mask``) are inputs of ``F.deformable_convolution``; the
    parameters and defaults are those of :func:`convolution`.

    Returns:
        nnabla.Variable: The output of ``F.deformable_convolution``.
    """
    w, b = _conv_parameters(inp, outmaps, kernel, base_axis, group, channel_last, w_init,
                            b_init, fix_parameters, rng, with_bias, apply_w, apply_b)
    return F.deformable_convolution(inp, w, offset, mask, b, base_axis=base_axis, pad=pad,
                                    stride=stride, dilation=dilation, group=group,
                                    deformable_group=deformable_group,
                                    channel_last=channel_last)


@parametric_function_api("embed", [
    ("W", "Embedding matrix", "(n_inputs, n_features)", True)])
def embed(inp, n_inputs, n_features, initializer=None, fix_parameters=False, apply_w=None):
    """Embedding: looks up rows of ``W`` with the integer indices ``inp``.

    Args:
        inp (nnabla.Variable): Integer indices in ``[0, n_inputs)``.
        n_inputs (int): Number of rows (vocabulary size).
        n_features (int): Row length.
        initializer (initializer or numpy.ndarray, optional): Default uniform in
            ``(-sqrt(3), sqrt(3))``.
        fix_parameters (bool): If True, the returned weight has need_grad=False.
        apply_w (callable, optional): Applied to the weight before use.

    Returns:
        nnabla.Variable: Shape ``inp.shape + (n_features,)``.
    """
    if initializer is None:
        initializer = UniformInitializer((-3 ** 0.5, 3 ** 0.5))
    w = get_or_create("W", [n_inputs, n_features], initializer, fix_parameters)
    if apply_w is not None:
        w = apply_w(w)
    return F.embed(inp, w)


@parametric_function_api("prelu", [
    ("slope", "Negative slope", "() if shared else (inp.shape[base_axis],)", True)])
def prelu(inp, base_axis=1, shared=True, fix_parameters=False, slope_init=None):
    """Parametric ReLU: ``y = max(0, x) + w * min(0, x)`` with a learned slope ``w``.

    Args:
        inp (nnabla.Variable): Input.
        base_axis (int): Channel axis of a per-channel slope.
        shared (bool): One slope for all channels (shape ``()``) if True.
        fix_parameters (bool): If True, the returned slope has need_grad=False.
        slope_init (initializer or numpy.ndarray, optional): Default 0.25.

    Returns:
        nnabla.Variable: Same shape as ``inp``.
    """
    shape = () if shared else (inp.shape[base_axis],)
    if slope_init is None:
        slope_init = ConstantInitializer(0.25)
    w = get_or_create("slope", shape, slope_init, fix_parameters)
    return F.prelu(inp, w, base_axis=base_axis)
