"""Converting a channel-first (NCHW) graph to the channel-last (NHWC) layout."""
from __future__ import annotations

from ._layout import LayoutModifier

__all__ = ["ChannelLastModifier"]


class ChannelLastModifier(LayoutModifier):
    """Convert a graph from the channel-first (NCHW) to the channel-last (NHWC) layout.

    Convolution, Deconvolution, BatchNormalization, MaxPooling, AveragePooling, SumPooling,
    Unpooling, Concatenate and Affine (on image inputs) are rewritten; kernels and batch
    normalization parameters get transposed copies named ``W_cl``, ``beta_cl``, ... in the
    original parameter's scope. Other functions are kept as they are.

    Args:
        inputs (list of nnabla.Variable): the NCHW inputs of the graph.
        inputs_cl (list of nnabla.Variable, optional): NHWC variables to use as the new
            inputs; made (with the transposed data of ``inputs``) when not given.

    Attributes:
        inputs_cl (list of nnabla.Variable): the new graph's inputs.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.random.rand(2, 3, 6, 6))
        >>> y = PF.convolution(x, 4, (3, 3))
        >>> modifier = GC.ChannelLastModifier([x])
        >>> yy = GC.GraphConverter([modifier]).convert(y)
        >>> modifier.inputs_cl[0].shape, yy.shape
        ((2, 6, 6, 3), (2, 4, 4, 4))
    """

    channel_last = True
    suffix = "cl"

    def __init__(self, inputs, inputs_cl=None):
        super().__init__(inputs, inputs_cl)

    def _set_converted_inputs(self, new):
        self.inputs_cl = new
