"""Backward functions of the logical family: Sign, ResetNaN, ResetInf and Where.

The comparisons and boolean operations are not differentiable: their entries return
no gradient (``None`` per input), as nnabla's registry does.
"""
from __future__ import annotations

from ._util import F
from .math import no_grad, no_gradient_backward, straight_through_backward


def reset_backward(is_reset):
    """Backward of ResetNaN / ResetInf: the replaced elements get zero gradient."""
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, val=0):
        kept = no_grad(1 - is_reset(inputs[0]))
        return [grad_outputs[0] * kept]
    return backward


def where_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx_true = dy where condition holds, dx_false = dy elsewhere; condition gets none."""
    fn = F()
    dy, condition = grad_outputs[0], inputs[0]
    zero = fn.constant(0, input_shapes[1])
    return [None, fn.where(condition, dy, zero), fn.where(condition, zero, dy)]


NOT_DIFFERENTIABLE = (
    "LogicalAnd", "LogicalOr", "LogicalXor", "Equal", "NotEqual", "GreaterEqual", "Greater",
    "LessEqual", "Less", "SearchSorted", "LogicalAndScalar", "LogicalOrScalar",
    "LogicalXorScalar", "EqualScalar", "NotEqualScalar", "GreaterEqualScalar",
    "GreaterScalar", "LessEqualScalar", "LessScalar", "LogicalNot", "IsNaN", "IsInf",
    # Validation
    "TopNError", "BinaryError", "ConfusionMatrix",
)

BACKWARDS = {
    "Sign": straight_through_backward,
    "ResetNaN": reset_backward(lambda x: F().isnan(x)),
    "ResetInf": reset_backward(lambda x: F().isinf(x)),
    "Where": where_backward,
    **{name: no_gradient_backward for name in NOT_DIFFERENTIABLE},
}
