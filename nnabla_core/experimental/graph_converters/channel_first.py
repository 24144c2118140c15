"""Converting a channel-last (NHWC) graph to the channel-first (NCHW) layout."""
from __future__ import annotations

from ._layout import LayoutModifier

__all__ = ["ChannelFirstModifier"]


class ChannelFirstModifier(LayoutModifier):
    """Convert a graph from the channel-last (NHWC) to the channel-first (NCHW) layout,
    the inverse of :class:`ChannelLastModifier` (new parameters are named ``W_cf``,
    ``beta_cf``, ...).

    Args:
        inputs (list of nnabla.Variable): the NHWC inputs of the graph.
        inputs_cf (list of nnabla.Variable, optional): NCHW variables to use as the new
            inputs; made (with the transposed data of ``inputs``) when not given.

    Attributes:
        inputs_cf (list of nnabla.Variable): the new graph's inputs.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.random.rand(2, 6, 6, 3))
        >>> y = PF.convolution(x, 4, (3, 3), channel_last=True)
        >>> modifier = GC.ChannelFirstModifier([x])
        >>> yy = GC.GraphConverter([modifier]).convert(y)
        >>> modifier.inputs_cf[0].shape, yy.shape
        ((2, 3, 6, 6), (2, 4, 4, 4))
    """

    channel_last = False
    suffix = "cf"

    def __init__(self, inputs, inputs_cf=None):
        super().__init__(inputs, inputs_cf)

    def _set_converted_inputs(self, new):
        self.inputs_cf = new
