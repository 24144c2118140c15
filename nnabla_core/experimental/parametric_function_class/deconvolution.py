"""N-D deconvolution as a class
(``nnabla.experimental.parametric_function_class.deconvolution``)."""
from __future__ import annotations

from ... import functions as F
from ...initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .module import Module, _new_parameter

__all__ = ["Deconvolution", "Deconv1d", "Deconv2d", "Deconv3d", "DeconvNd"]


class Deconvolution(Module):
    """N-D deconvolution (transposed convolution) holding its own kernel and bias (see
    :func:`nnabla.parametric_functions.deconvolution`).

    Args:
        inmaps (int): input channels.
        outmaps (int): output channels.
        kernel (tuple of int): kernel size.
        pad, stride, dilation (tuple of int, optional): as in
            :func:`nnabla.functions.deconvolution`.
        group (int): channel groups.
        w_init (initializer or numpy.ndarray): kernel initializer (default: uniform within
            :func:`~nnabla.initializer.calc_uniform_lim_glorot`).
        b_init (initializer or numpy.ndarray): bias initializer (default: zeros).
        base_axis (int): dimensions before it are sample dimensions.
        fix_parameters (bool): parameters get ``need_grad=False``.
        rng (numpy.random.RandomState): random source of the default kernel initializer.
        with_bias (bool): add the bias term.

    Attributes:
        W (nnabla.Variable): ``(inmaps, outmaps // group) + kernel``, the layout
            :func:`nnabla.functions.deconvolution` expects (nnabla 1.39's class allocates
            ``(outmaps, inmaps // group) + kernel``, which only works when both are equal).
        b (nnabla.Variable or None): ``(outmaps,)``.
    """

    def __init__(self, inmaps, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                 w_init=None, b_init=None, base_axis=1, fix_parameters=False, rng=None,
                 with_bias=True):
        if w_init is None:
            w_init = UniformInitializer(
                calc_uniform_lim_glorot(inmaps, outmaps, tuple(kernel)), rng=rng)
        if with_bias and b_init is None:
            b_init = ConstantInitializer()
        shape = (inmaps, outmaps // group) + tuple(kernel)
        self.W = _new_parameter(w_init, shape, not fix_parameters, "Deconvolution")
        self.b = _new_parameter(b_init, (outmaps,), not fix_parameters, "Deconvolution") \
            if with_bias else None
        self.base_axis = base_axis
        self.pad = pad
        self.stride = stride
        self.dilation = dilation
        self.group = group

    def __call__(self, inp):
        """Apply the deconvolution to ``inp``."""
        return F.deconvolution(inp, self.W, self.b, self.base_axis, self.pad, self.stride,
                               self.dilation, self.group)


Deconv1d = Deconvolution
Deconv2d = Deconvolution
Deconv3d = Deconvolution
DeconvNd = Deconvolution
