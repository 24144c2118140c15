"""Backward functions of the extra array functions: bool_fill, top-k and assign.

Top-k gradients keep dy where the forward selected.
Selections are recomputed from unlinked values, so no backward pass reaches them.
"""
from __future__ import annotations

from ._shaping import detached, no_grad, zeros
from ._util import F


def bool_fill_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, value=0):
    """d data = dy with the filled positions zeroed."""
    return [F().bool_fill(grad_outputs[0], inputs[1], 0.0), None]


def assign_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """As nnabla (and the kernel): the output gradient goes to dst, none to src."""
    return [grad_outputs[0], None]


def _samples(shape, base_axis):
    axis = base_axis % len(shape)
    rows = 1
    for s in shape[:axis]:
        rows *= s
    return rows, (rows and _size(shape) // rows)


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def top_k_data_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, k,
                        abs=False, reduce=True, base_axis=1, largest=True, with_index=False):
    """reduce: dy goes back to the selected positions; else the whole dy passes (as nnabla)."""
    dy = grad_outputs[0]
    if not reduce:
        return [dy]
    shape = tuple(input_shapes[0])
    rows, cols = _samples(shape, base_axis)
    _, index = F().top_k_data(detached(inputs[0]), k, abs=abs, reduce=True,
                              base_axis=base_axis, largest=largest, with_index=True)
    index = no_grad(F().reshape(index, (rows, k), inplace=False))
    values = F().reshape(dy, (rows, k), inplace=False)
    g = F().scatter_add(zeros((rows, cols)), index, values, axis=1)
    return [F().reshape(g, shape, inplace=False)]


def top_k_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, k,
                        abs=False, base_axis=1):
    """dx = dy where dy is among the k largest of its sample (by |dy| if ``abs``)."""
    dy = grad_outputs[0]
    kept = F().top_k_data(detached(dy), k, abs=abs, reduce=False, base_axis=base_axis)
    mask = no_grad(F().not_equal_scalar(kept, 0.0))
    return [dy * mask]


def bool_gather_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """d input = the gathered rows' gradient scattered back to the mask's positions."""
    return [F().bool_scatter(grad_outputs[0], no_grad(inputs[1])), None]


def bool_scatter_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """d input = dy at the mask's positions (bool_gather); d output (written in place) =
    dy where the mask is zero."""
    dy, mask = grad_outputs[0], no_grad(inputs[1])
    grads = [F().bool_gather(dy, mask), None]
    if len(inputs) > 2:
        lead = tuple(input_shapes[1])
        shaped = F().reshape(mask, lead + (1,) * (len(output_shapes[0]) - len(lead)),
                             inplace=False)
        grads.append(F().bool_fill(dy, shaped, 0.0))
    return grads


# PackPaddedSequence and PadPackedSequence keep the first-order fallback (their gradients
# are each other, with the lengths as extra data the backward pass would have to carry).
# BoolGather's and BoolScatter's gradients size themselves from the mask's data when the
# graph is built, as nnabla's setup does.
BACKWARDS = {
    "BoolFill": bool_fill_backward, "Assign": assign_backward,
    "TopKData": top_k_data_backward, "TopKGrad": top_k_grad_backward,
    "BoolGather": bool_gather_backward, "BoolScatter": bool_scatter_backward,
}
