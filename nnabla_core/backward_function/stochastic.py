"""Dropout's backward function: ``dx = dy * mask / (1 - p)`` with the forward pass's mask.

The Dropout kernel keeps the mask of its last forward pass (and replays it on
recomputation). :class:`DropoutMask` reads it into the graph, after the dropout
it belongs to has run (its input is the dropout's output, when given), so the gradient uses
the very mask that produced ``y``, and differentiating again reuses it.
"""
from __future__ import annotations

from .. import _execute, _graph
from .._array import F32
from ._grad_function import GradFunction


class DropoutMask(GradFunction):
    """The 0/1 mask the ``dropout`` function drew in its last forward pass (no gradient).

    Args:
        dropout (Function): the Dropout function node whose mask to read.
    """

    def __init__(self, dropout):
        super().__init__(dropout.ctx)
        self.dropout = dropout

    def min_outputs(self):
        return 1

    def grad_depends_input_data(self, i, j):
        return False

    def setup_impl(self, inputs, outputs):
        outputs[0].reset_shape(tuple(inputs[0].shape), True)
        if getattr(self.dropout.kernel, "mask", None) is not None:
            self.forward_impl(inputs, outputs)

    def forward_impl(self, inputs, outputs):
        mask = getattr(self.dropout.kernel, "mask", None)
        if mask is None:
            raise RuntimeError("dropout's gradient needs its mask: run the forward pass of "
                               "F.dropout before its gradient")
        f = self.dropout        # the mask lives in the dropout kernel's family
        _execute.store(f, outputs[0]._node.data, f.family.astype(mask, F32), F32)


def dropout_of(x):
    """The Dropout function that consumes ``x`` (the last one created)."""
    for ref in reversed(_graph.consumer_refs(x._node)):
        f = ref()
        if f is not None and not f.python and f.spec.name == "Dropout":
            return f
    raise RuntimeError("dropout's gradient needs the F.dropout function applied to this "
                       "input; none consumes it")


def dropout_mask(x, y=None):
    """A Variable holding the mask of the dropout applied to ``x`` (see :class:`DropoutMask`).

    Args:
        x (Variable): the dropout's input.
        y (Variable): the dropout's output, or None. Given, the mask is read after the
            dropout runs in the same forward pass (which runs it if needed); None reads the
            mask of the dropout's last run without running it again.
    """
    mask = DropoutMask(dropout_of(x))(x if y is None else y)
    mask.need_grad = False
    return mask


def dropout_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, p=0.5,
                     seed=-1):
    """dx = dy * mask / (1 - p), with the mask of the forward pass.

    Returns the Variable itself (not a list), as nnabla's does for this function.
    """
    y = outputs[0] if outputs and outputs[0] is not None else None
    mask = dropout_mask(inputs[0], y)
    return grad_outputs[0] * mask * (1.0 / (1.0 - p)) if p < 1 else grad_outputs[0] * 0.0


def dropout_mask_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """The mask is a constant."""
    return [None]


BACKWARDS = {"Dropout": dropout_backward, "DropoutMask": dropout_mask_backward}
