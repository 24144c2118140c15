"""Backward functions of the activation functions (built from ``nnabla.functions``).

The branches at kinks follow the CPU kernels exactly (e.g. ELU takes the linear branch
at x = 0, LeakyReLU the slope branch), so first-order results equal the engine's.
"""
from __future__ import annotations

import math

from ._util import F
from .math import elementwise, no_grad

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715


def _last_axis(axis, ndim):
    return ndim - 1 if axis is None else axis % ndim


def sigmoid_slope(x, y):
    """y (1 - y)."""
    return y * (1 - y)


def tanh_slope(x, y):
    """1 - y^2."""
    return 1 - y ** 2


def swish_slope(x, y):
    """y + sigmoid(x) (1 - y)."""
    return y + F().sigmoid(x) * (1 - y)


def relu_slope(x, y, inplace=False):
    """1 where y > 0 (read from the output, as the kernel does), else 0."""
    return no_grad(F().greater_scalar(y, 0))


def leaky_relu_slope(x, y, alpha=0.1, inplace=False):
    """1 for x > 0, alpha elsewhere."""
    positive = no_grad(F().greater_scalar(x, 0))
    return positive * (1 - alpha) + alpha


def _elu_part_slope(x, alpha):
    """1 for x >= 0, alpha exp(x) below (exp of min(x, 0): never overflows)."""
    linear = no_grad(F().greater_equal_scalar(x, 0))
    return linear + (1 - linear) * alpha * F().exp(F().minimum_scalar(x, 0))


def elu_slope(x, y, alpha=1.0):
    """1 for x >= 0, alpha exp(x) below."""
    return _elu_part_slope(x, alpha)


def selu_slope(x, y, scale=1.05070098735548, alpha=1.673263242354377):
    """scale for x > 0, scale alpha exp(x) elsewhere."""
    positive = no_grad(F().greater_scalar(x, 0))
    return scale * (positive + (1 - positive) * alpha * F().exp(F().minimum_scalar(x, 0)))


def gelu_slope(x, y):
    """0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3c x^2), t = tanh(sqrt(2/pi) (x + c x^3))."""
    t = F().tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x ** 3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t ** 2) * SQRT_2_OVER_PI * (1 + 3 * GELU_CUBIC * x ** 2)


def mish_slope(x, y):
    """t + x sigmoid(x) (1 - t^2), t = tanh(softplus(x))."""
    t = F().tanh(F().softplus(x))
    return t + x * F().sigmoid(x) * (1 - t ** 2)


def relu6_slope(x, y):
    """1 for 0 < x < 6, else 0."""
    return no_grad(F().greater_scalar(x, 0) * F().less_scalar(x, 6))


def hard_sigmoid_slope(x, y):
    """0.2 for -2.5 <= x <= 2.5, else 0."""
    return no_grad(F().greater_equal_scalar(x, -2.5) * F().less_equal_scalar(x, 2.5) * 0.2)


def hard_tanh_slope(x, y):
    """1 for -1 <= x <= 1, else 0."""
    return no_grad(F().greater_equal_scalar(x, -1) * F().less_equal_scalar(x, 1))


def log_sigmoid_slope(x, y):
    """sigmoid(-x)."""
    return F().sigmoid(-x)


def softplus_slope(x, y, beta=1.0):
    """sigmoid(beta x)."""
    return F().sigmoid(beta * x)


def softsign_slope(x, y):
    """1 / (1 + |x|)^2."""
    return (1 + F().abs(x)) ** -2


def tanh_shrink_slope(x, y):
    """tanh(x)^2."""
    return F().tanh(x) ** 2


def sinc_slope(x, y):
    """(cos x - sin x / x) / x, and 0 at x = 0 (evaluated at a safe x there)."""
    nonzero = no_grad(F().not_equal_scalar(x, 0))
    safe = x * nonzero + (1 - nonzero)
    return nonzero * (F().cos(safe) - F().sin(safe) / safe) / safe


def softmax_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=None):
    """dx = y (dy - sum(dy y, axis))."""
    dy, y = grad_outputs[0], outputs[0]
    axis = _last_axis(axis, len(output_shapes[0]))
    return [y * (dy - F().sum(dy * y, axis=axis, keepdims=True))]


def log_softmax_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                         axis=None):
    """dx = dy - exp(y) sum(dy, axis)."""
    dy, y = grad_outputs[0], outputs[0]
    axis = _last_axis(axis, len(output_shapes[0]))
    return [dy - F().exp(y) * F().sum(dy, axis=axis, keepdims=True)]


def _halves(dy, axis):
    """The two halves of ``dy`` along ``axis`` (the f(x) and f(-x) parts)."""
    shape = list(dy.shape)
    half = shape[axis] // 2
    start, stop = [0] * len(shape), list(shape)
    stop[axis] = half
    first = F().slice(dy, start, stop, [1] * len(shape))
    start[axis], stop[axis] = half, shape[axis]
    return first, F().slice(dy, start, stop, [1] * len(shape))


def crelu_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=1):
    """dx = [x > 0] dy_pos - [-x > 0] dy_neg."""
    x = inputs[0]
    dy_pos, dy_neg = _halves(grad_outputs[0], axis % len(input_shapes[0]))
    return [dy_pos * no_grad(F().greater_scalar(x, 0)) -
            dy_neg * no_grad(F().less_scalar(x, 0))]


def celu_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, alpha=1.0,
                  axis=1):
    """dx = elu'(x) dy_pos - elu'(-x) dy_neg."""
    x = inputs[0]
    dy_pos, dy_neg = _halves(grad_outputs[0], axis % len(input_shapes[0]))
    return [dy_pos * _elu_part_slope(x, alpha) - dy_neg * _elu_part_slope(-x, alpha)]


def prelu_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, base_axis=1):
    """dx0 = dy for x0 >= 0 else slope dy; dslope = sum of dy x0 where x0 < 0.

    The slope is shared (one value) or per channel of ``base_axis``.
    """
    fn = F()
    dy, (x, w) = grad_outputs[0], inputs
    x_shape, w_shape = input_shapes
    ndim = len(x_shape)
    base_axis %= ndim
    per_channel = math.prod(w_shape) != 1
    view = [1] * ndim
    if per_channel:
        view[base_axis] = x_shape[base_axis]
    w_view = fn.reshape(w, view)
    negative = no_grad(fn.less_scalar(x, 0))
    dx = dy * (1 - negative) + dy * negative * w_view
    contribution = dy * x * negative
    axes = [i for i in range(ndim) if view[i] == 1]
    dw = fn.sum(contribution, axis=axes) if axes else contribution
    return [dx, fn.reshape(dw, w_shape)]


BACKWARDS = {
    "Sigmoid": elementwise(sigmoid_slope), "Swish": elementwise(swish_slope),
    "Tanh": elementwise(tanh_slope), "ReLU": elementwise(relu_slope),
    "LeakyReLU": elementwise(leaky_relu_slope), "Softmax": softmax_backward,
    "LogSoftmax": log_softmax_backward, "ELU": elementwise(elu_slope),
    "SELU": elementwise(selu_slope), "CReLU": crelu_backward, "CELU": celu_backward,
    "PReLU": prelu_backward, "GELU": elementwise(gelu_slope), "Mish": elementwise(mish_slope),
    "ReLU6": elementwise(relu6_slope), "HardSigmoid": elementwise(hard_sigmoid_slope),
    "HardTanh": elementwise(hard_tanh_slope), "LogSigmoid": elementwise(log_sigmoid_slope),
    "SoftPlus": elementwise(softplus_slope), "SoftSign": elementwise(softsign_slope),
    "TanhShrink": elementwise(tanh_shrink_slope), "Sinc": elementwise(sinc_slope),
}
