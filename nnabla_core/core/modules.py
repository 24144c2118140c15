"""Ready-made modules: :class:`ConvBn` and the bottleneck :class:`ResUnit`."""
from __future__ import annotations

from .. import functions as F
from .. import parametric_functions as PF
from .module import Module


def complete_dims(s, dims):
    """``s`` repeated ``dims`` times if a scalar, else ``s`` (of length ``dims``)."""
    if not hasattr(s, "__iter__"):
        return (s,) * dims
    if len(s) == dims:
        return s
    raise ValueError(f"complete_dims: {s!r} has {len(s)} entries; expected {dims}")


def get_conv_same_pad(k):
    """Padding keeping the size for odd kernel sizes ``k``."""
    return tuple(kk // 2 for kk in k)


class ConvBn(Module):
    """Convolution without bias, batch normalization, optional activation ``act``."""

    def __init__(self, outmaps, kernel=1, stride=1, act=None):
        self.outmaps = outmaps
        self.kernel = kernel
        self.stride = stride
        self.act = act

    def call(self, x, training=True):
        kernel = complete_dims(self.kernel, 2)
        h = PF.convolution(x, self.outmaps, kernel, get_conv_same_pad(kernel),
                           complete_dims(self.stride, 2), with_bias=False)
        h = PF.batch_normalization(h, batch_stat=training)
        return h if self.act is None else self.act(h)


class ResUnit(Module):
    """Bottleneck residual unit: 1x1, 3x3 (stride), 1x1 ConvBn, plus a ConvBn skip."""

    def __init__(self, channels, stride=1, skip_by_conv=True):
        self.conv1 = ConvBn(channels // 4, 1, 1, act=lambda x: F.relu(x, inplace=True))
        self.conv2 = ConvBn(channels // 4, 3, stride, act=lambda x: F.relu(x, inplace=True))
        self.conv3 = ConvBn(channels, 1)
        self.skip_by_conv = skip_by_conv
        self.skip = ConvBn(channels, 1, stride)

    def call(self, x, training=True):
        h = self.conv3(self.conv2(self.conv1(x)))
        s = self.skip(x) if self.skip_by_conv else x
        return F.relu(F.add2(h, s, inplace=True), inplace=True)
