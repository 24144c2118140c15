"""Backward functions of the depthwise convolutions, max pooling and fused convolution.

The depthwise layers use the bilinear scheme of :mod:`._layers`; max pooling's
gradient is ``F.max_pooling_backward``, linear in ``dy`` with routing that is
piecewise constant in ``x``; the fused convolution is differentiated as its
composition (pad, convolution, batch normalization, add, activation).
"""
from __future__ import annotations

from ._composite import composite_backward
from ._grad_function import DataGrad, FilterGrad
from ._layers import make_grad_function, bilinear_backwards, channel_bias_axes
from ._util import F
from .normalization import batch_norm


class DepthwiseConvolutionDataGrad(DataGrad):
    """dx of ``F.depthwise_convolution`` from ``(dy, weight)``; set ``xshape``."""

    type_name, n_inputs, others = "DepthwiseConvolution", 3, (1,)


class DepthwiseConvolutionFilterGrad(FilterGrad):
    """dw of ``F.depthwise_convolution`` from ``(dy, x)``; set ``wshape``."""

    type_name, n_inputs = "DepthwiseConvolution", 3


class DepthwiseDeconvolutionDataGrad(DataGrad):
    """dx of ``F.depthwise_deconvolution`` from ``(dy, weight)``; set ``xshape``."""

    type_name, n_inputs, others = "DepthwiseDeconvolution", 3, (1,)


class DepthwiseDeconvolutionFilterGrad(FilterGrad):
    """dw of ``F.depthwise_deconvolution`` from ``(dy, x)``; set ``wshape``."""

    type_name, n_inputs = "DepthwiseDeconvolution", 3


class MaxPoolingBackwardDataGrad(DataGrad):
    """The gradient of ``F.max_pooling_backward`` w.r.t. ``dy``, from ``(g_dx, x)``:
    ``g_dx`` gathered at the maxima. Set ``yshape`` (the shape of ``dy``).

    Args:
        ctx (Context): the context.
        kernel, stride, ignore_border, pad, channel_last: as ``F.max_pooling``'s.
    """

    type_name, n_inputs, others = "MaxPoolingBackward", 2, (1,)

    @property
    def yshape(self):
        """The shape of max pooling's output (of ``dy``)."""
        return self.target_shape

    @yshape.setter
    def yshape(self, shape):
        self.target_shape = tuple(shape)


def max_pooling_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
    """dx = F.max_pooling_backward(dy, x)."""
    return [F().max_pooling_backward(grad_outputs[0], inputs[0], **args)]


def max_pooling_backward_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                  **args):
    """Linear in dy (g_dy gathers g_dx at the maxima); no gradient for x."""
    data_grad = make_grad_function(MaxPoolingBackwardDataGrad, args, input_shapes[0])
    g_dy = data_grad(grad_outputs[0], inputs[1])
    return [g_dy, None]


def max_pooling_backward_data_grad_backward(grad_outputs, inputs, input_shapes, outputs,
                                            output_shapes, **args):
    """The transpose of the gather is max_pooling_backward again."""
    return [F().max_pooling_backward(grad_outputs[0], inputs[1], **args), None]


_ACTIVATIONS = {"identity": "identity", "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh",
                "leaky_relu": "leaky_relu", "elu": "elu", "relu6": "relu6"}


def _fused_convolution(inputs, output_shapes, base_axis=1, pad=(), stride=None, dilation=None,
                       group=1, channel_last=False, decay_rate=0.9, eps=1e-5, batch_stat=True,
                       nonlinearity="relu", nonlinearity_args=(), pad_mode="constant",
                       constant_value=0):
    x, w, b, beta, gamma, mean, variance, z = list(inputs) + [None] * (8 - len(inputs))
    n = x.ndim - base_axis - 1
    widths = list(pad) if len(pad) == 2 * n else [p for p in pad for _ in range(2)]
    padded = F().pad(x, widths + ([0, 0] if channel_last else []), pad_mode,
                     constant_value=constant_value)
    h = F().convolution(padded, w, b, base_axis, [0] * n, stride, dilation, group, channel_last)
    if beta is not None:
        axis = h.ndim - 1 if channel_last else base_axis
        h = batch_norm(h, beta, gamma, mean, variance, [axis], eps, batch_stat)[0]
    if z is not None:
        h = h + z
    activation = getattr(F(), _ACTIVATIONS[nonlinearity])
    extra = list(nonlinearity_args[:1]) if nonlinearity in ("leaky_relu", "elu") else []
    return [activation(h, *extra)]


BACKWARDS = {
    **bilinear_backwards("DepthwiseConvolution",
                         lambda x, w, **args: F().depthwise_convolution(x, w, None, **args),
                         DepthwiseConvolutionDataGrad, DepthwiseConvolutionFilterGrad,
                         channel_bias_axes),
    **bilinear_backwards("DepthwiseDeconvolution",
                         lambda x, w, **args: F().depthwise_deconvolution(x, w, None, **args),
                         DepthwiseDeconvolutionDataGrad, DepthwiseDeconvolutionFilterGrad,
                         channel_bias_axes),
    "MaxPooling": max_pooling_backward,
    "MaxPoolingBackward": max_pooling_backward_backward,
    "MaxPoolingBackwardDataGrad": max_pooling_backward_data_grad_backward,
    "FusedConvolution": composite_backward(_fused_convolution),
}
