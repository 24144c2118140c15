"""Backward functions of the loss functions (built from ``nnabla.functions``).

Integer label inputs get no gradient. Negative labels are ignored (zero gradient) and
probabilities are floored at the float32 ``tiny`` inside logs and divisions, as in
the CPU kernels, so first-order results equal the engine's.
"""
from __future__ import annotations

import numpy as np

from ._util import F, reduce_to
from .math import no_grad

TINY = float(np.finfo(np.float32).tiny)


def _one_hot(target, x_shape, axis):
    """1 at each label's position along ``axis`` (all 0 for a negative label), as a mask."""
    fn = F()
    view = [1] * len(x_shape)
    view[axis] = x_shape[axis]
    classes = fn.reshape(fn.arange(0, x_shape[axis]), view)
    return no_grad(fn.equal(target, classes))


def softmax_cross_entropy_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                   axis=None):
    """dx = dy (softmax(x) - onehot(t)), zero for negative labels."""
    fn = F()
    dy, (x, target) = grad_outputs[0], inputs
    axis = len(input_shapes[0]) - 1 if axis is None else axis % len(input_shapes[0])
    valid = no_grad(fn.greater_equal_scalar(target, 0))
    onehot = _one_hot(target, input_shapes[0], axis)
    return [dy * valid * (fn.softmax(x, axis=axis) - onehot), None]


def categorical_cross_entropy_backward(grad_outputs, inputs, input_shapes, outputs,
                                       output_shapes, axis=None):
    """dx = -dy onehot(t) / x at the label (zero for negative labels)."""
    fn = F()
    dy, (x, target) = grad_outputs[0], inputs
    axis = len(input_shapes[0]) - 1 if axis is None else axis % len(input_shapes[0])
    onehot = _one_hot(target, input_shapes[0], axis)
    return [-dy * onehot / fn.maximum_scalar(x, TINY), None]


def sigmoid_cross_entropy_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy (sigmoid(x) - t); the integer labels get none."""
    dy, (x, target) = grad_outputs[0], inputs
    return [dy * (F().sigmoid(x) - target), None]


def binary_cross_entropy_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy (x - t) / (x (1 - x)); dt = dy (log(1 - x) - log(x)).

    As in nnabla, the target gets a gradient only when it needs one (it is usually data).
    """
    fn = F()
    dy, (x, target) = grad_outputs[0], inputs
    dx = dy * (x - target) / fn.maximum_scalar(x - x ** 2, TINY)
    if not target.need_grad:
        return [dx, None]
    dt = dy * (fn.log(fn.maximum_scalar(1 - x, TINY)) - fn.log(fn.maximum_scalar(x, TINY)))
    return [dx, dt]


def difference_loss(slope):
    """Backward of a loss of d = x0 - x1 (broadcast), given ``slope(d, **args) = f'(d)``."""
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        dy, (x0, x1) = grad_outputs[0], inputs
        g = dy * slope(x0 - x1, **args)
        return [reduce_to(g, input_shapes[0]), reduce_to(-g, input_shapes[1])]
    backward.__name__ = f"{slope.__name__}_backward"
    backward.__doc__ = f"dx0 = -dx1 = dy * f'(x0 - x1): {slope.__doc__}"
    return backward


def squared_error_slope(d):
    """2 d."""
    return 2 * d


def absolute_error_slope(d):
    """+1 for d > 0, -1 elsewhere (the kernel's choice at 0)."""
    return no_grad(F().greater_scalar(d, 0) * 2 - 1)


def huber_loss_slope(d, delta=1.0):
    """2 d for |d| < delta, 2 delta sign(d) elsewhere."""
    fn = F()
    inside = no_grad(fn.less_scalar(fn.abs(d), delta))
    sign = no_grad(fn.greater_scalar(d, 0) - fn.less_scalar(d, 0))
    return 2 * (inside * d + (1 - inside) * sign * delta)


def epsilon_insensitive_loss_slope(d, epsilon=None):
    """+1 for d > epsilon, -1 for d < -epsilon, 0 between."""
    fn = F()
    return no_grad(fn.greater_scalar(d, epsilon) - fn.less_scalar(d, -epsilon))


def kl_multinomial_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                            base_axis=1):
    """dp = dy (log(p + eps) - log(q + eps) + 1); dq = -dy p / q (eps = 1e-8, as the kernel)."""
    fn = F()
    eps = 1e-8
    dy, (p, q) = grad_outputs[0], inputs
    ndim = len(input_shapes[0])
    base_axis %= ndim
    dy = fn.reshape(dy, list(input_shapes[0][:base_axis]) + [1] * (ndim - base_axis))
    dp = dy * (fn.log(p + eps) - fn.log(q + eps) + 1)
    dq = -dy * p / q
    return [dp, dq]


BACKWARDS = {
    "SoftmaxCrossEntropy": softmax_cross_entropy_backward,
    "CategoricalCrossEntropy": categorical_cross_entropy_backward,
    "SigmoidCrossEntropy": sigmoid_cross_entropy_backward,
    "BinaryCrossEntropy": binary_cross_entropy_backward,
    "SquaredError": difference_loss(squared_error_slope),
    "AbsoluteError": difference_loss(absolute_error_slope),
    "HuberLoss": difference_loss(huber_loss_slope),
    "EpsilonInsensitiveLoss": difference_loss(epsilon_insensitive_loss_slope),
    "KLMultinomial": kl_multinomial_backward,
}
