"""``F.convolution``'s backward function and nnabla's ``ConvolutionDataGrad`` /
``ConvolutionFilterGrad`` (see :mod:`._grad_function` and :mod:`._layers`)."""
from __future__ import annotations

from ._grad_function import DataGrad, FilterGrad
from ._layers import bilinear_backwards, channel_bias_axes
from ._util import F


class ConvolutionDataGrad(DataGrad):
    """dx of ``F.convolution`` from ``(dy, weight)``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis, pad, stride, dilation, group, channel_last: as ``F.convolution``'s.
    """

    type_name, n_inputs, others = "Convolution", 3, (1,)


class ConvolutionFilterGrad(FilterGrad):
    """dw of ``F.convolution`` from ``(dy, x)``; set ``wshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis, pad, stride, dilation, group, channel_last: as ``F.convolution``'s.
    """

    type_name, n_inputs = "Convolution", 3


def _convolution(x, w, **args):
    return F().convolution(x, w, None, **args)


BACKWARDS = bilinear_backwards("Convolution", _convolution, ConvolutionDataGrad,
                               ConvolutionFilterGrad, channel_bias_axes)
