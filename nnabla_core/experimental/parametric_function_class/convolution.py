"""N-D convolution as a class (``nnabla.experimental.parametric_function_class.convolution``)."""
from __future__ import annotations

from ... import functions as F
from ...initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .module import Module, _new_parameter

__all__ = ["Convolution", "Conv1d", "Conv2d", "Conv3d", "ConvNd"]


class Convolution(Module):
    """N-D convolution holding its own kernel and bias (see
    :func:`nnabla.parametric_functions.convolution`).

    Args:
        inmaps (int): input channels.
        outmaps (int): output channels (number of kernels).
        kernel (tuple of int): kernel size.
        pad, stride, dilation (tuple of int, optional): as in
            :func:`nnabla.functions.convolution`.
        group (int): channel groups.
        w_init (initializer or numpy.ndarray): kernel initializer (default: uniform within
            :func:`~nnabla.initializer.calc_uniform_lim_glorot`).
        b_init (initializer or numpy.ndarray): bias initializer (default: zeros).
        base_axis (int): dimensions before it are sample dimensions.
        fix_parameters (bool): parameters get ``need_grad=False``.
        rng (numpy.random.RandomState): random source of the default kernel initializer.
        with_bias (bool): add the bias term.

    Attributes:
        W (nnabla.Variable): ``(outmaps, inmaps // group) + kernel``.
        b (nnabla.Variable or None): ``(outmaps,)``.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.experimental.parametric_function_class.convolution import Conv2d
        >>> conv = Conv2d(3, 8, (3, 3), pad=(1, 1))
        >>> conv(nn.Variable((2, 3, 10, 10))).shape
        (2, 8, 10, 10)
    """

    def __init__(self, inmaps, outmaps, kernel, pad=None, stride=None, dilation=None, group=1,
                 w_init=None, b_init=None, base_axis=1, fix_parameters=False, rng=None,
                 with_bias=True):
        if w_init is None:
            w_init = UniformInitializer(
                calc_uniform_lim_glorot(inmaps, outmaps, tuple(kernel)), rng=rng)
        if with_bias and b_init is None:
            b_init = ConstantInitializer()
        shape = (outmaps, inmaps // group) + tuple(kernel)
        self.W = _new_parameter(w_init, shape, not fix_parameters, "Convolution")
        self.b = _new_parameter(b_init, (outmaps,), not fix_parameters, "Convolution") \
            if with_bias else None
        self.base_axis = base_axis
        self.pad = pad
        self.stride = stride
        self.dilation = dilation
        self.group = group

    def __call__(self, inp):
        """Apply the convolution to ``inp``."""
        return F.convolution(inp, self.W, self.b, self.base_axis, self.pad, self.stride,
                             self.dilation, self.group)


Conv1d = Convolution
Conv2d = Convolution
Conv3d = Convolution
ConvNd = Convolution
