"""``F.deconvolution``'s backward function and nnabla's ``DeconvolutionDataGrad`` /
``DeconvolutionFilterGrad`` (see :mod:`._grad_function` and :mod:`._layers`)."""
from __future__ import annotations

from ._grad_function import DataGrad, FilterGrad
from ._layers import bilinear_backwards, channel_bias_axes
from ._util import F


class DeconvolutionDataGrad(DataGrad):
    """dx of ``F.deconvolution`` from ``(dy, weight)``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis, pad, stride, dilation, group, channel_last, output_padding: as
            ``F.deconvolution``'s.
    """

    type_name, n_inputs, others = "Deconvolution", 3, (1,)


class DeconvolutionFilterGrad(FilterGrad):
    """dw of ``F.deconvolution`` from ``(dy, x)``; set ``wshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis, pad, stride, dilation, group, channel_last, output_padding: as
            ``F.deconvolution``'s.
    """

    type_name, n_inputs = "Deconvolution", 3


def _deconvolution(x, w, **args):
    return F().deconvolution(x, w, None, **args)


BACKWARDS = bilinear_backwards("Deconvolution", _deconvolution, DeconvolutionDataGrad,
                               DeconvolutionFilterGrad, channel_bias_axes)
