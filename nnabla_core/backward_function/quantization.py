"""Backward functions of the quantization layers.

The quantizers pass the gradient straight through the rounding (STE), as their kernels do:
``dx = dy``, times a mask of the inputs whose gradient passes (computed from values with
no gradient), so the gradient's own derivative w.r.t. ``x`` is zero and w.r.t. ``dy`` the
same mask. The linear (de)quantizers scale by ``scale`` as nnabla's functions do.

The layers on quantised weights (binary connect, binary weight, INQ) are an affine or a
convolution of ``x`` with the quantised weight ``wq``, whose gradient goes to ``weight``
unchanged. Their backward functions differentiate that layer with the weight replaced by
``weight + (wq - weight)``, the difference taken without gradient (see
:mod:`._composite`): the value is ``wq``, the derivative w.r.t. ``weight`` the identity.
"""
from __future__ import annotations

from ._composite import composite_backward
from ._shaping import detached, no_grad
from ._util import F, reduce_to


# ------------------------------------------------------------ element quantizers
def _masked(grad_outputs, mask):
    return [grad_outputs[0] * no_grad(mask)]


def binary_sigmoid_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy / 2 where |x| < 1, else 0."""
    return _masked(grad_outputs, F().less_scalar(F().abs(detached(inputs[0])), 1.0) * 0.5)


def binary_tanh_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy where |x| < 1, else 0."""
    return _masked(grad_outputs, F().less_scalar(F().abs(detached(inputs[0])), 1.0))


def _within(x, low, high):
    """1 where low <= x <= high (no gradient)."""
    x = detached(x)
    return F().greater_equal_scalar(x, low) * F().less_equal_scalar(x, high)


def fixed_point_quantize_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                  sign=True, n=8, delta=0.0625, ste_fine_grained=True):
    """dx = dy, zeroed outside the representable range when ``ste_fine_grained``."""
    if not ste_fine_grained:
        return [grad_outputs[0] * 1.0]
    high = ((1 << (n - 1)) - 1.0) * delta if sign else ((1 << n) - 1.0) * delta
    low = -high if sign else 0.0
    return _masked(grad_outputs, _within(inputs[0], low, high))


def pow2_quantize_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                           sign=True, with_zero=True, n=8, m=1, ste_fine_grained=True):
    """dx = dy where |x| rounds to at most 2^m (and, unsigned, x >= 0) when fine-grained.

    log2|x| rounds (half away from zero) to at most m below 2^(m + 1/2); for m < 0 the
    half-way point itself rounds down to m.
    """
    if not ste_fine_grained:
        return [grad_outputs[0] * 1.0]
    x = detached(inputs[0])
    bound = 2.0 ** (m + 0.5)
    keep = F().less_scalar(F().abs(x), bound) if m >= 0 else \
        F().less_equal_scalar(F().abs(x), bound)
    if not sign:
        keep = keep * F().greater_equal_scalar(x, 0.0)
    return _masked(grad_outputs, keep)


def prune_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, rate=0.9):
    """dx = dy (the pruned elements too)."""
    return [grad_outputs[0] * 1.0]


def quantize_linear_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                             round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False, dtype=1):
    """dx = dy / scale; scale and zero_point get no gradient."""
    return [grad_outputs[0] / inputs[1], None, None]


def dequantize_linear_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy * scale; scale and zero_point get no gradient."""
    return [grad_outputs[0] * inputs[1], None, None]


def _nudged_range(qr_min, qr_max, ql_min, ql_max):
    """The quantised range [low, high] that min_max_quantize rounds into (no gradient)."""
    qr_min, qr_max, ql_min, ql_max = (detached(v) for v in (qr_min, qr_max, ql_min, ql_max))
    scale = (qr_max - qr_min) / (ql_max - ql_min)
    zero_point = ql_min - qr_min / scale
    zero_point = F().where(F().less_equal(zero_point, ql_min), ql_min,
                           F().where(F().greater_equal(zero_point, ql_max), ql_max,
                                     F().round(zero_point)))
    return (ql_min - zero_point) * scale, (ql_max - zero_point) * scale


def min_max_quantize_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                              decay=0.999, x_min_max=False, ema=False, ste_fine_grained=True,
                              eps=0.01):
    """dx = dy (inside the nudged range when fine-grained); when the range is learnt (not
    taken from x), qr_min gets dy below the range and qr_max dy above it.

    The range is read from qr_min/qr_max after the forward pass has updated them.
    """
    dy, x = grad_outputs[0], inputs[0]
    low, high = _nudged_range(*inputs[1:5])
    x_value = detached(x)
    grads = [dy * 1.0, None, None, None, None]
    if ste_fine_grained:
        grads[0] = dy * no_grad(F().greater_equal(x_value, low) * F().less_equal(x_value, high))
    if not (x_min_max or ema):
        grads[1] = reduce_to(dy * no_grad(F().less(x_value, low)), input_shapes[1])
        grads[2] = reduce_to(dy * no_grad(F().greater(x_value, high)), input_shapes[2])
    return grads


# ------------------------------------------------------- layers on quantised weights
def straight_through(weight, quantized):
    """``quantized``'s value with ``weight``'s gradient: weight + (quantized - weight)."""
    return weight + (quantized - detached(weight))


def _binarized(weight, quantize_zero_to):
    return F().sign(detached(weight), quantize_zero_to)


def _binary_weight(weight, quantize_zero_to, alpha_axis):
    """sign(weight) times mean |weight| over ``alpha_axis`` of the 2-D weight."""
    value = detached(weight)
    flat = F().reshape(value, (weight.shape[0], -1))
    alpha = F().mean(F().abs(flat), axis=alpha_axis, keepdims=True)
    signs = F().sign(flat, quantize_zero_to)
    return F().reshape(signs * alpha, weight.shape)


def _layer(forward, quantize, bias_slot):
    """The composition ``forward(x, straight_through(weight, quantize(weight)), bias)``."""
    def composition(inputs, output_shapes, **args):
        x, weight, bias = inputs[0], inputs[1], inputs[bias_slot]
        wq = weight if quantize is None else straight_through(weight, quantize(weight, args))
        return [forward(x, wq, bias, **args)]
    return composition


def _affine(x, w, b, base_axis=1, **quantizer_args):
    return F().affine(x, w, b, base_axis=base_axis)


def _convolution(x, w, b, base_axis=1, pad=None, stride=None, dilation=None, group=1,
                 **quantizer_args):
    return F().convolution(x, w, b, base_axis=base_axis, pad=pad, stride=stride,
                           dilation=dilation, group=group)


def _layout(bias_slot):
    """The inputs are complete, or the trailing bias is left out."""
    def layout(n_given, **args):
        return [True] * bias_slot + [n_given > bias_slot]
    return layout


def _connect(weight, args):
    return _binarized(weight, args["quantize_zero_to"])


def _weight_per_column(weight, args):
    return _binary_weight(weight, args["quantize_zero_to"], alpha_axis=0)


def _weight_per_row(weight, args):
    return _binary_weight(weight, args["quantize_zero_to"], alpha_axis=1)


def _layer_backward(forward, quantize, bias_slot):
    return composite_backward(_layer(forward, quantize, bias_slot), _layout(bias_slot))


BACKWARDS = {
    "BinarySigmoid": binary_sigmoid_backward,
    "BinaryTanh": binary_tanh_backward,
    "FixedPointQuantize": fixed_point_quantize_backward,
    "Pow2Quantize": pow2_quantize_backward,
    "Prune": prune_backward,
    "QuantizeLinear": quantize_linear_backward,
    "DequantizeLinear": dequantize_linear_backward,
    "MinMaxQuantize": min_max_quantize_backward,
    "BinaryConnectAffine": _layer_backward(_affine, _connect, 3),
    "BinaryConnectConvolution": _layer_backward(_convolution, _connect, 3),
    "BinaryWeightAffine": _layer_backward(_affine, _weight_per_column, 4),
    "BinaryWeightConvolution": _layer_backward(_convolution, _weight_per_row, 4),
    # INQ writes the quantised weight into `weight` itself during the forward pass.
    "INQAffine": _layer_backward(_affine, None, 3),
    "INQConvolution": _layer_backward(_convolution, None, 3),
}
