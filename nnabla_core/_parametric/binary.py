"""Parametric binarized (BinaryConnect, BinaryWeight) and INQ affine/convolution layers.

Each keeps a float weight ``W`` (trainable) and a companion array registered with
``need_grad=False``: ``Wb`` (binarized weights, drawn like ``W``) or ``I`` (INQ indicator,
zeros); binary-weight layers also keep a scale ``alpha`` (zeros). As in nnabla, the
convolution weights are ``(outmaps, inmaps, *kernel)`` whatever ``group`` is, and the
default initializers of ``W`` then ``Wb`` draw in that order when created.
"""

from .. import functions as F
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from ..parameter import get_parameter_or_create
from .api import as_list, flat_size, get_or_create, parametric_function_api


def _or(value, default):
    """``value`` unless it is None (initializers may be numpy arrays: no truth test)."""
    return default if value is None else value


def _glorot(inmaps, outmaps, kernel, rng):
    return UniformInitializer(calc_uniform_lim_glorot(inmaps, outmaps, kernel), rng=rng)


def _weights(w_shape, w_init, extra, b_shape, b_init, fix_parameters, with_bias, alpha=False):
    """Creates ``W``, the companion ``extra=(name, initializer)``, ``alpha`` and ``b``."""
    w = get_or_create("W", w_shape, w_init, fix_parameters)
    companion = get_parameter_or_create(extra[0], w_shape, extra[1], False)
    scale = None
    if alpha:
        scale = get_parameter_or_create("alpha", b_shape, ConstantInitializer(0), False)
    b = None
    if with_bias:
        b_init = b_init if b_init is not None else ConstantInitializer()
        b = get_or_create("b", b_shape, b_init, fix_parameters)
    return w, companion, scale, b


def _affine_shapes(inp, n_outmaps, base_axis):
    n_outmaps = as_list(n_outmaps)
    inmaps = flat_size(inp.shape[base_axis:])
    return inmaps, [inmaps] + n_outmaps, n_outmaps




@parametric_function_api("bicon_affine", [
    ("W", "Float weights", "(inmaps, outmaps)", True),
    ("Wb", "Binarized weights", "(inmaps, outmaps)", False),
    ("b", "Bias", "(outmaps,)", True)])
def binary_connect_affine(inp, n_outmaps, base_axis=1, quantize_zero_to=1.0, w_init=None,
                          wb_init=None, b_init=None, fix_parameters=False, rng=None,
                          with_bias=True):
    """BinaryConnect affine: the forward pass uses sign-binarized weights ``Wb``.

    Args:
        inp (nnabla.Variable): Input, flattened from ``base_axis`` on.
        n_outmaps (int or tuple of int): Output neurons per sample.
        base_axis (int): First flattened axis.
        w_init, b_init (initializer or numpy.ndarray, optional): Glorot uniform / zeros.
        fix_parameters (bool): If True, ``W`` and ``b`` are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of default initializers.
        with_bias (bool): Whether a bias is used.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    inmaps, w_shape, n_outmaps = _affine_shapes(inp, n_outmaps, base_axis)
    w_init = _or(w_init, _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng))
    wb_init = _or(wb_init, _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng))
    w, wb, _, b = _weights(w_shape, w_init, ("Wb", wb_init), n_outmaps, b_init,
                           fix_parameters, with_bias)
    return F.binary_connect_affine(inp, w, wb, b, base_axis=base_axis,
                                   quantize_zero_to=quantize_zero_to)


@parametric_function_api("bwn_affine", [
    ("W", "Float weights", "(inmaps, outmaps)", True),
    ("Wb", "Binarized weights", "(inmaps, outmaps)", False),
    ("alpha", "Scaling factor", "(outmaps,)", False),
    ("b", "Bias", "(outmaps,)", True)])
def binary_weight_affine(inp, n_outmaps, base_axis=1, quantize_zero_to=1.0, w_init=None,
                         wb_init=None, b_init=None, fix_parameters=False, rng=None,
                         with_bias=True):
    """Binary-weight affine: binarized weights scaled by ``alpha`` per output.

    Args:
        inp (nnabla.Variable): Input, flattened from ``base_axis`` on.
        n_outmaps (int or tuple of int): Output neurons per sample.
        base_axis (int): First flattened axis.
        w_init, b_init (initializer or numpy.ndarray, optional): Glorot uniform / zeros.
        fix_parameters (bool): If True, ``W`` and ``b`` are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of default initializers.
        with_bias (bool): Whether a bias is used.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    inmaps, w_shape, n_outmaps = _affine_shapes(inp, n_outmaps, base_axis)
    w_init = _or(w_init, _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng))
    wb_init = _or(wb_init, _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng))
    w, wb, alpha, b = _weights(w_shape, w_init, ("Wb", wb_init), n_outmaps, b_init,
                               fix_parameters, with_bias, alpha=True)
    return F.binary_weight_affine(inp, w, wb, alpha, b, base_axis=base_axis,
                                  quantize_zero_to=quantize_zero_to)


@parametric_function_api("inq_affine", [
    ("W", "Float weights", "(inmaps, outmaps)", True),
    ("I", "Indicator of fixed weights", "(inmaps, outmaps)", False),
    ("b", "Bias", "(outmaps,)", True)])
def inq_affine(inp, n_outmaps, base_axis=1, num_bits=4, inq_iterations=(),
               selection_algorithm="random", seed=-1, w_init=None, i_init=None, b_init=None,
               fix_parameters=False, rng=None, with_bias=True):
    """Incremental network quantization affine (power-of-two weights, indicator ``I``).

    Args:
        inp (nnabla.Variable): Input, flattened from ``base_axis`` on.
        n_outmaps (int or tuple of int): Output neurons per sample.
        base_axis (int): First flattened axis.
        w_init, b_init (initializer or numpy.ndarray, optional): Glorot uniform / zeros.
        fix_parameters (bool): If True, ``W`` and ``b`` are returned with need_grad=False.
        rng (numpy.random.RandomState, optional): Generator of default initializers.
        with_bias (bool): Whether a bias is used.

    Returns:
        nnabla.Variable: Shape ``inp.shape[:base_axis] + n_outmaps``.
    """
    inmaps, w_shape, n_outmaps = _affine_shapes(inp, n_outmaps, base_axis)
    w_init = _or(w_init, _glorot(inmaps, flat_size(n_outmaps), (1, 1), rng))
    i_init = _or(i_init, ConstantInitializer())
    w, indicator, _, b = _weights(w_shape, w_init, ("I", i_init), n_outmaps, b_init,
                                  fix_parameters, with_bias)
    return F.inq_affine(inp, w, indicator, b, base_axis=base_axis, num_bits=num_bits,
                        inq_iterations=inq_iterations,
                        selection_algorithm=selection_algorithm, seed=seed)



def _conv_shapes(inp, outmaps, kernel, base_axis, rng):
    channels = inp.shape[base_axis]
    return (outmaps, channels) + tuple(kernel), _glorot(channels, outmaps, tuple(kernel), rng)


@parametric_function_api("bicon_conv", [
    ("W", "Float filters", "(outmaps, inmaps, *kernel)", True),
    ("Wb", "Binarized filters", "(outmaps, inmaps, *kernel)", False),
    ("b", "Bias", "(outmaps,)", True)])
def binary_connect_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None,
                               group=1, quantize_zero_to=1.0, w_init=None, wb_init=None,
                               b_init=None, base_axis=1, fix_parameters=False, rng=None,
                               with_bias=True):
    """BinaryConnect convolution (filters binarized by sign in the forward pass).

    Returns:
        nnabla.Variable: The output of ``F.binary_connect_convolution``.
    """
    w_shape, w_default = _conv_shapes(inp, outmaps, kernel, base_axis, rng)
    wb_default = _conv_shapes(inp, outmaps, kernel, base_axis, rng)[1]
    w_init, wb_init = _or(w_init, w_default), _or(wb_init, wb_default)
    w, wb, _, b = _weights(w_shape, w_init, ("Wb", wb_init),
                           (outmaps,), b_init, fix_parameters, with_bias)
    return F.binary_connect_convolution(inp, w, wb, b, base_axis=base_axis, pad=pad,
                                        stride=stride, dilation=dilation, group=group,
                                        quantize_zero_to=quantize_zero_to)


@parametric_function_api("bwn_conv", [
    ("W", "Float filters", "(outmaps, inmaps, *kernel)", True),
    ("Wb", "Binarized filters", "(outmaps, inmaps, *kernel)", False),
    ("alpha", "Scaling factor", "(outmaps,)", False),
    ("b", "Bias", "(outmaps,)", True)])
def binary_weight_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None,
                              group=1, quantize_zero_to=1.0, w_init=None, wb_init=None,
                              b_init=None, base_axis=1, fix_parameters=False, rng=None,
                              with_bias=True):
    """Binary-weight convolution (binarized filters scaled by ``alpha`` per output map).

    Returns:
        nnabla.Variable: The output of ``F.binary_weight_convolution``.
    """
    w_shape, w_default = _conv_shapes(inp, outmaps, kernel, base_axis, rng)
    wb_default = _conv_shapes(inp, outmaps, kernel, base_axis, rng)[1]
    w_init, wb_init = _or(w_init, w_default), _or(wb_init, wb_default)
    w, wb, alpha, b = _weights(w_shape, w_init, ("Wb", wb_init),
                               (outmaps,), b_init, fix_parameters, with_bias, alpha=True)
    return F.binary_weight_convolution(inp, w, wb, alpha, b, base_axis=base_axis, pad=pad,
                                       stride=stride, dilation=dilation, group=group,
                                       quantize_zero_to=quantize_zero_to)


@parametric_function_api("inq_conv", [
    ("W", "Float filters", "(outmaps, inmaps, *kernel)", True),
    ("I", "Indicator of fixed weights", "(outmaps, inmaps, *kernel)", False),
    ("b", "Bias", "(outmaps,)", True)])
def inq_convolution(inp, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                    num_bits=4, inq_iterations=(), selection_algorithm="random", seed=-1,
                    w_init=None, i_init=None, b_init=None, base_axis=1,
                    fix_parameters=False, rng=None, with_bias=True):
    """Incremental network quantization convolution (indicator ``I`` of fixed weights).

    Returns:
        nnabla.Variable: The output of ``F.inq_convolution``.
    """
    w_shape, w_default = _conv_shapes(inp, outmaps, kernel, base_axis, rng)
    w, indicator, _, b = _weights(w_shape, _or(w_init, w_default),
                                  ("I", _or(i_init, ConstantInitializer())), (outmaps,), b_init,
                                  fix_parameters, with_bias)
    return F.inq_convolution(inp, w, indicator, b, base_axis=base_axis, pad=pad,
                             stride=stride, dilation=dilation, group=group,
                             num_bits=num_bits, inq_iterations=inq_iterations,
                             selection_algorithm=selection_algorithm, seed=seed)
