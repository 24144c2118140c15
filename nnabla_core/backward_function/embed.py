"""``F.embed``'s backward function and nnabla's ``EmbedFilterGrad`` (see
:mod:`._grad_function`). The indices ``x0`` get no gradient."""
from __future__ import annotations

from ._grad_function import FilterGrad
from ._util import F


class EmbedFilterGrad(FilterGrad):
    """dw of ``F.embed`` from ``(dy, x0)``: ``dy`` rows added into the rows ``x0`` picks.

    Args:
        ctx (Context): the context.
        base_axis (int): accepted for nnabla's signature; unused.
    """

    type_name, n_inputs = "Embed", 2

    def __init__(self, ctx=None, base_axis=1):
        super().__init__(ctx)


def embed_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dw = EmbedFilterGrad(dy, x0); no gradient for the indices."""
    from ..context import get_current_context
    dfw = EmbedFilterGrad(get_current_context())
    dfw.wshape = input_shapes[1]
    return [None, dfw(grad_outputs[0], inputs[0])]


def embed_filter_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """The filter gradient is linear in dy: g_dy = embed(x0, g_dw)."""
    return [F().embed(inputs[1], grad_outputs[0]), None]


BACKWARDS = {"Embed": embed_backward, "EmbedFilterGrad": embed_filter_grad_backward}
