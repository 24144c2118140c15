"""Backward functions of the math family: element-wise functions, ATan2 and BatchMatmul.

Each gradient is written with ``nnabla.functions`` so that it can be differentiated
again. Masks (comparison results) are constants of the gradient graph: they are
marked ``need_grad=False``, as the kinks they describe have zero second derivative.
The cumulative scans live in :mod:`.cumulative`.
"""
from __future__ import annotations

import math

from ._util import F, reduce_to

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def no_grad(mask):
    """Mark a mask (a comparison result) as a constant of the gradient graph."""
    return mask.apply(need_grad=False)


def elementwise(derivative):
    """Backward of ``y = f(x)`` given ``derivative(x, y) = f'(x)`` as a Variable."""
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        return [grad_outputs[0] * derivative(inputs[0], outputs[0], **args)]
    backward.__name__ = f"{derivative.__name__}_backward"
    backward.__doc__ = f"dx = dy * {derivative.__name__}(x, y): {derivative.__doc__}"
    return backward


def straight_through_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                              **args):
    """dx = dy (Identity, and the rounding functions whose gradient passes straight through)."""
    return [F().identity(grad_outputs[0])]


def no_gradient_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
    """A non-differentiable function (or one without inputs): no gradient for any input."""
    return [None] * len(input_shapes)


def abs_slope(x, y):
    """+1 for x >= 0, -1 below (the kernel's choice at 0)."""
    return no_grad(F().greater_equal_scalar(x, 0) * 2 - 1)


def exp_slope(x, y):
    """exp(x), read from the output."""
    return y


def log_slope(x, y):
    """1 / x."""
    return 1 / x


def sin_slope(x, y):
    """cos(x)."""
    return F().cos(x)


def cos_slope(x, y):
    """-sin(x)."""
    return -F().sin(x)


def tan_slope(x, y):
    """1 / cos(x)^2."""
    return 1 / F().cos(x) ** 2


def sinh_slope(x, y):
    """cosh(x)."""
    return F().cosh(x)


def cosh_slope(x, y):
    """sinh(x)."""
    return F().sinh(x)


def asin_slope(x, y):
    """1 / sqrt(1 - x^2)."""
    return (1 - x ** 2) ** -0.5


def acos_slope(x, y):
    """-1 / sqrt(1 - x^2)."""
    return -(1 - x ** 2) ** -0.5


def atan_slope(x, y):
    """1 / (1 + x^2)."""
    return 1 / (1 + x ** 2)


def asinh_slope(x, y):
    """1 / sqrt(x^2 + 1)."""
    return (x ** 2 + 1) ** -0.5


def acosh_slope(x, y):
    """1 / sqrt(x^2 - 1)."""
    return (x ** 2 - 1) ** -0.5


def atanh_slope(x, y):
    """1 / (1 - x^2)."""
    return 1 / (1 - x ** 2)


def erf_slope(x, y):
    """2 / sqrt(pi) * exp(-x^2)."""
    return TWO_OVER_SQRT_PI * F().exp(-(x ** 2))


def atan2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """d atan2(x0, x1) = (x1 dx0 - x0 dx1) / (x0^2 + x1^2), summed over broadcast axes."""
    dy, (x0, x1) = grad_outputs[0], inputs
    scale = dy / (x0 ** 2 + x1 ** 2)
    return [reduce_to(scale * x1, input_shapes[0]), reduce_to(-scale * x0, input_shapes[1])]


def batch_matmul_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                          transpose_a=False, transpose_b=False):
    """Gradients of ``y = op(a) @ op(b)``, each a batch_matmul of dy and the other operand.

    With A = op(a), B = op(b): dA = dy B^T and dB = A^T dy. Each product is arranged
    so that it yields op^-1 directly (a transpose of a product swaps and transposes its
    factors), then summed over the batch axes that were broadcast.
    """
    bmm = F().batch_matmul
    dy, (a, b) = grad_outputs[0], inputs
    if transpose_a:
        da = bmm(b, dy, transpose_a=transpose_b, transpose_b=True)       # (dy B^T)^T = B dy^T
    else:
        da = bmm(dy, b, transpose_a=False, transpose_b=not transpose_b)  # dy B^T
    if transpose_b:
        db = bmm(dy, a, transpose_a=True, transpose_b=transpose_a)       # (A^T dy)^T = dy^T A
    else:
        db = bmm(a, dy, transpose_a=not transpose_a, transpose_b=False)  # A^T dy
    return [reduce_to(da, input_shapes[0]), reduce_to(db, input_shapes[1])]


BACKWARDS = {
    "Abs": elementwise(abs_slope), "Exp": elementwise(exp_slope),
    "Log": elementwise(log_slope), "Identity": straight_through_backward,
    "Round": straight_through_backward, "Ceil": straight_through_backward,
    "Floor": straight_through_backward,
    "Sin": elementwise(sin_slope), "Cos": elementwise(cos_slope),
    "Tan": elementwise(tan_slope), "Sinh": elementwise(sinh_slope),
    "Cosh": elementwise(cosh_slope), "ASin": elementwise(asin_slope),
    "ACos": elementwise(acos_slope), "ATan": elementwise(atan_slope),
    "ASinh": elementwise(asinh_slope), "ACosh": elementwise(acosh_slope),
    "ATanh": elementwise(atanh_slope), "Erf": elementwise(erf_slope),
    "ATan2": atan2_backward, "BatchMatmul": batch_matmul_backward,
    # Generators: no inputs to differentiate.
    "Constant": no_gradient_backward, "Arange": no_gradient_backward,
    "Linspace": no_gradient_backward,
}
