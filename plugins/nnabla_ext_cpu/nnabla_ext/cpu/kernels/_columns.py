"""Convolutions as im2col + GEMM, written against ``xp``, a chunk of samples at a time.

Column buffers have two layouts, chosen so that each group's GEMM operand is a plain
(strided) matrix:

- channel-first: ``(C, *kernel, N, *out)``, i.e. per group a (C/G*K, N*O) matrix;
- channel-last: ``(N, *out, G, *kernel, C/G)``, i.e. per group an (N*O, K*C/G)
  matrix, the transposed view of the same operand.

The columns of a whole batch are ``prod(kernel)`` times the size of the image (72 MiB
for 32 samples of 64x32x32 under a 3x3 kernel), so the kernels unfold the batch in
chunks of samples (:func:`sample_chunks`) whose columns fit :data:`COLUMN_BUDGET`.
A chunk is the same problem with a smaller ``batch``: every function here takes the
geometry of the samples it is given.
"""
from __future__ import annotations

import dataclasses
import itertools
import math

# Elements of one column buffer (6 MiB of float32): ResNet-18 at batch 32 unfolds two
# samples of its 64-channel 32x32 stage per GEMM. Columns of 3 samples there (6.75 MiB)
# raised inference's peak RSS by 7 MiB (measured, benchmarks/README.md); fewer, larger
# GEMMs are otherwise faster when other processes load the cores (BLAS threads wait).
COLUMN_BUDGET = 3 << 19


@dataclasses.dataclass(frozen=True)
class ConvGeometry:
    """One convolution seen as im2col + GEMM.

    The image is ``(batch, channels, *in_shape)`` (or channels last); ``out_shape``
    is the spatial size of the convolution's output (a deconvolution's input).
    """

    batch: int
    channels: int
    groups: int
    in_shape: tuple
    out_shape: tuple
    kernel: tuple
    pad: tuple
    stride: tuple
    dilation: tuple
    channel_last: bool

    @property
    def image_shape(self):
        if self.channel_last:
            return (self.batch,) + self.in_shape + (self.channels,)
        return (self.batch, self.channels) + self.in_shape

    @property
    def col_shape(self):
        if self.channel_last:
            return ((self.batch,) + self.out_shape + (self.groups,) + self.kernel
                    + (self.channels // self.groups,))
        return (self.channels,) + self.kernel + (self.batch,) + self.out_shape

    @property
    def col_size(self):
        return self.channels * math.prod(self.kernel) * self.pixels

    @property
    def rows(self):
        """Rows of one group's column matrix: C/G * prod(kernel)."""
        return self.channels // self.groups * math.prod(self.kernel)

    @property
    def pixels(self):
        """Columns of the column matrix: batch * prod(out_shape)."""
        return self.batch * math.prod(self.out_shape)

    @property
    def out_pixels(self):
        return math.prod(self.out_shape)


def conv_geometry(image, out_spatial, kernel, kernel_args, base_axis, groups, channel_last):
    """The geometry of an image shape (``image``: the full shape, batch axes included)."""
    n = len(kernel)
    spatial = tuple(image[base_axis:base_axis + n] if channel_last
                    else image[base_axis + 1:base_axis + 1 + n])
    channels = image[base_axis + n] if channel_last else image[base_axis]
    return ConvGeometry(math.prod(image[:base_axis]), channels, groups, spatial,
                        tuple(out_spatial), tuple(kernel), *kernel_args, channel_last)


def sample_ranges(batch, per_sample, budget=COLUMN_BUDGET):
    """Consecutive ``(start, stop)`` sample ranges covering ``batch`` samples.

    Each range holds at most ``budget // per_sample`` samples (at least one); the ranges
    are as even as their number allows, so the GEMMs over them stay alike.
    """
    count = -(-batch // max(1, budget // max(1, per_sample)))
    if count == 0:
        return ()
    size = -(-batch // count)
    return tuple((start, min(batch, start + size)) for start in range(0, batch, size))


def sample_chunks(g, budget=COLUMN_BUDGET):
    """:func:`sample_ranges` of a convolution whose columns fit ``budget`` elements, each
    as ``(start, stop, geometry of those samples)``."""
    geometries = {}
    chunks = []
    for start, stop in sample_ranges(g.batch, g.col_size // max(1, g.batch), budget):
        n = stop - start
        if n not in geometries:
            geometries[n] = dataclasses.replace(g, batch=n)
        chunks.append((start, stop, geometries[n]))
    return tuple(chunks)


def _tap_slices(g, k):
    """Slices of the padded image that kernel offset ``k`` reads, for every output."""
    return tuple(slice(ki * d, ki * d + (o - 1) * s + 1, s)
                 for ki, d, o, s in zip(k, g.dilation, g.out_shape, g.stride))


def _pad_widths(g):
    """Padding before/after each spatial axis so that every tap is inside the array."""
    return [(p, max(0, (o - 1) * s + (k - 1) * d + 1 - p - i))
            for p, o, s, k, d, i in zip(g.pad, g.out_shape, g.stride, g.kernel, g.dilation,
                                        g.in_shape)]


def _spatial_index(g, spatial):
    """Index tuple selecting ``spatial`` in an image of ``g``'s layout."""
    full = slice(None)
    return (full,) + spatial + (full,) if g.channel_last else (full, full) + spatial


def _with_padding(xp, x, g):
    widths = _pad_widths(g)
    if not any(a or b for a, b in widths):
        return x
    full = [(0, 0)]
    return xp.pad(x, full + widths + full if g.channel_last else full * 2 + widths)


def im2col(xp, x, g, out=None):
    """Column buffer of image ``x`` (shape ``g.col_shape``); out-of-image taps are 0.

    ``out``, when given, is a C-contiguous array of ``g.col_size`` elements to fill.
    """
    xpad = _with_padding(xp, x.reshape(g.image_shape), g)
    col = xp.empty(g.col_shape, dtype=x.dtype) if out is None else out.reshape(g.col_shape)
    lead = (slice(None),) * (2 + len(g.kernel))
    for k in itertools.product(*map(range, g.kernel)):
        patch = xpad[_spatial_index(g, _tap_slices(g, k))]
        if g.channel_last:
            col[lead + k] = patch.reshape(patch.shape[:-1] + (g.groups, g.channels // g.groups))
        else:
            col[(slice(None),) + k] = patch.swapaxes(0, 1)
    return col


def col2im(xp, col, g, out=None):
    """Adjoint of :func:`im2col`: sums every column entry back into its image pixel.

    ``out``, when given, is a C-contiguous array of the image's size to overwrite.
    """
    col = col.reshape(g.col_shape)
    widths = _pad_widths(g)
    padded = [i + a + b for i, (a, b) in zip(g.in_shape, widths)]
    shape = ((g.batch, *padded, g.channels) if g.channel_last
             else (g.batch, g.channels, *padded))
    xpad = xp.zeros(shape, dtype=col.dtype)
    lead = (slice(None),) * (2 + len(g.kernel))
    for k in itertools.product(*map(range, g.kernel)):
        target = _spatial_index(g, _tap_slices(g, k))
        if g.channel_last:
            part = col[lead + k]
            xpad[target] += part.reshape(part.shape[:-2] + (g.channels,))
        else:
            xpad[target] += col[(slice(None),) + k].swapaxes(0, 1)
    image = xpad[_spatial_index(g, tuple(slice(a, a + i)
                                         for i, (a, _) in zip(g.in_shape, widths)))]
    if out is None:
        return xp.ascontiguousarray(image)
    out.reshape(g.image_shape)[...] = image
    return out


# Grouped GEMM operands: every matrix below is (groups, rows, batch * pixels).
def cols_as_gemm(g, col):
    if g.channel_last:
        return col.reshape(g.pixels, g.groups, g.rows).transpose(1, 2, 0)
    return col.reshape(g.groups, g.rows, g.pixels)


def gemm_as_cols(xp, g, m):
    if g.channel_last:
        return xp.ascontiguousarray(m.transpose(2, 0, 1)).reshape(g.col_shape)
    return m.reshape(g.col_shape)


def maps_as_gemm(g, y, channels):
    """Feature maps on the output grid, ``(N, C, *out)`` or ``(N, *out, C)``, as GEMM rows."""
    per = channels // g.groups
    if g.channel_last:
        return y.reshape(g.pixels, g.groups, per).transpose(1, 2, 0)
    y = y.reshape(g.batch, channels, g.out_pixels).transpose(1, 0, 2)
    return y.reshape(g.groups, per, g.pixels)


def store_maps(g, m, out):
    """Write the inverse of :func:`maps_as_gemm` of ``m`` into ``out`` (C-contiguous)."""
    groups, per = m.shape[:2]
    if g.channel_last:
        out.reshape(g.pixels, groups, per)[...] = m.transpose(2, 0, 1)
    else:
        maps = m.reshape(groups, per, g.batch, g.out_pixels).transpose(2, 0, 1, 3)
        out.reshape(g.batch, groups, per, g.out_pixels)[...] = maps


def add_bias(xp, y, bias, channel_axis):
    """``y + bias`` along ``channel_axis``, in place when ``y`` keeps its dtype."""
    shape = [1] * y.ndim
    shape[channel_axis] = -1
    bias = bias.reshape(shape)
    if xp.result_type(y, bias) != y.dtype:
        return y + bias
    y += bias
    return y


def bias_grad(dy, channel_axis):
    return dy.sum(axis=tuple(a for a in range(dy.ndim) if a != channel_axis))
