"""Backward functions of the arithmetic family (built from ``nnabla.functions``)."""
from __future__ import annotations

from ._util import F, reduce_to


def add2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, inplace=False):
    dy = grad_outputs[0]
    return [reduce_to(dy, input_shapes[0]), reduce_to(dy, input_shapes[1])]


def sub2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, inplace=False):
    dy = grad_outputs[0]
    return [reduce_to(dy, input_shapes[0]), reduce_to(-dy, input_shapes[1])]


def mul2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, inplace=False):
    dy, (x0, x1) = grad_outputs[0], inputs
    return [reduce_to(dy * x1, input_shapes[0]), reduce_to(dy * x0, input_shapes[1])]


def div2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, inplace=False):
    dy, (x0, x1) = grad_outputs[0], inputs
    return [reduce_to(dy / x1, input_shapes[0]),
            reduce_to(-dy * x0 / (x1 ** 2), input_shapes[1])]


def pow2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, inplace=False):
    dy, (x0, x1) = grad_outputs[0], inputs
    return [reduce_to(dy * x1 * x0 ** (x1 - 1), input_shapes[0]),
            reduce_to(dy * x0 ** x1 * F().log(x0), input_shapes[1])]


def _select_backward(compare):
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
        dy, (x0, x1) = grad_outputs[0], inputs
        take0 = compare(x0, x1)
        return [reduce_to(dy * take0, input_shapes[0]),
                reduce_to(dy * F().logical_not(take0), input_shapes[1])]
    return backward


def add_n_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    return [reduce_to(grad_outputs[0], s) for s in input_shapes]


def mul_n_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    dy = grad_outputs[0]
    grads = []
    for i, shape in enumerate(input_shapes):
        g = dy
        for j, x in enumerate(inputs):
            if j != i:
                g = g * x
        grads.append(reduce_to(g, shape))
    return grads


def add_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1,
                        inplace=False):
    return [grad_outputs[0] * 1.0]


def mul_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1,
                        inplace=False):
    return [grad_outputs[0] * val]


def pow_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1,
                        inplace=False):
    return [grad_outputs[0] * val * inputs[0] ** (val - 1)]


def r_sub_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1):
    return [-grad_outputs[0]]


def r_div_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1):
    return [-grad_outputs[0] * val / inputs[0] ** 2]


def r_pow_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=1):
    import math
    return [grad_outputs[0] * F().r_pow_scalar(inputs[0], val) * math.log(val)]


def maximum_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                            val=1.0):
    return [grad_outputs[0] * F().greater_scalar(inputs[0], val)]


def minimum_scalar_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                            val=1.0):
    return [grad_outputs[0] * F().less_scalar(inputs[0], val)]


BACKWARDS = {
    "Add2": add2_backward, "Sub2": sub2_backward, "Mul2": mul2_backward,
    "Div2": div2_backward, "Pow2": pow2_backward,
    "Maximum2": _select_backward(lambda a, b: F().greater(a, b)),
    "Minimum2": _select_backward(lambda a, b: F().less(a, b)),
    "AddN": add_n_backward, "MulN": mul_n_backward,
    "AddScalar": add_scalar_backward, "MulScalar": mul_scalar_backward,
    "PowScalar": pow_scalar_backward, "RSubScalar": r_sub_scalar_backward,
    "RDivScalar": r_div_scalar_backward, "RPowScalar": r_pow_scalar_backward,
    "MaximumScalar": maximum_scalar_backward, "MinimumScalar": minimum_scalar_backward,
}
