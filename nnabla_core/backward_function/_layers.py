"""Backward functions of linear layers, built from their named gradient functions.

A bilinear layer ``y = L(x, w) + b`` (affine, the convolutions) has

- ``dx = DataGrad(dy, w)``, ``dw = FilterGrad(dy, x)``, ``db = sum(dy)``;
- the data gradient, bilinear in ``(dy, w)``: ``g_dy = L(g_dx, w)``,
  ``g_w = FilterGrad(dy, g_dx)``;
- the filter gradient, bilinear in ``(dy, x)``: ``g_dy = L(x, g_dw)``,
  ``g_x = DataGrad(dy, g_dw)``.

A linear map of one input (the poolings, unpooling) has ``dx = DataGrad(dy)`` and
``g_dy = L(g_dx)``. Each builder returns the registry entries of one layer.
"""
from __future__ import annotations

from ._util import F


def _ctx():
    from ..context import get_current_context
    return get_current_context()


def make_grad_function(cls, args, shape):
    """An instance of gradient function ``cls`` with ``args``, computing an array of ``shape``."""
    f = cls(_ctx(), **args)
    f.target_shape = tuple(shape)
    return f


def bilinear_backwards(type_name, forward, data_grad, filter_grad, bias_axes):
    """Registry entries of ``type_name`` and its two gradient functions.

    Args:
        type_name (str): the layer, e.g. "Convolution".
        forward (callable): ``forward(x, w, **args)``, the layer without bias.
        data_grad, filter_grad (type): the layer's DataGrad and FilterGrad classes.
        bias_axes (callable): ``bias_axes(ndim, **args)``, the axes ``dy`` is summed
            over for the bias gradient.
    """
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        dy, x, w = grad_outputs[0], inputs[0], inputs[1]
        dx = make_grad_function(data_grad, args, input_shapes[0])(dy, w)
        dw = make_grad_function(filter_grad, args, input_shapes[1])(dy, x)
        if len(inputs) < 3 or inputs[2] is None:
            return [dx, dw] + [None] * (len(inputs) - 2)
        db = F().sum(dy, axis=bias_axes(len(output_shapes[0]), **args))
        return [dx, dw, F().reshape(db, input_shapes[2])]

    def data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        g_dx, dy, w = grad_outputs[0], inputs[0], inputs[1]
        return [forward(g_dx, w, **args), make_grad_function(filter_grad, args, w.shape)(dy, g_dx)]

    def filter_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                             **args):
        g_dw, dy, x = grad_outputs[0], inputs[0], inputs[1]
        return [forward(x, g_dw, **args), make_grad_function(data_grad, args, x.shape)(dy, g_dw)]

    return {type_name: backward, data_grad.__name__: data_grad_backward,
            filter_grad.__name__: filter_grad_backward}


def unary_backwards(type_name, forward, data_grad):
    """Registry entries of a linear map of one input and of its DataGrad class."""
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        return [make_grad_function(data_grad, args, input_shapes[0])(grad_outputs[0])]

    def data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        return [forward(grad_outputs[0], **args)]

    return {type_name: backward, data_grad.__name__: data_grad_backward}


def channel_bias_axes(ndim, base_axis=1, channel_last=False, **args):
    """Every axis of ``dy`` but the channel axis (``base_axis``, or the last one)."""
    channel = ndim - 1 if channel_last else base_axis % ndim
    return [a for a in range(ndim) if a != channel]
