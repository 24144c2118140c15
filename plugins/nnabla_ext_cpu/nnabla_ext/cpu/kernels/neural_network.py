"""Kernels of the neural network layers, written against ``xp``.

Convolutions are im2col + one batched GEMM per call (``xp.matmul`` over the
groups), backward is two GEMMs + col2im. Column buffers have two layouts,
chosen so that each group's GEMM operand is a plain (strided) matrix:

- channel-first: ``(C, *kernel, N, *out)``, i.e. per group a (C/G*K, N*O) matrix;
- channel-last: ``(N, *out, G, *kernel, C/G)``, i.e. per group an (N*O, K*C/G)
  matrix, the transposed view of the same operand.

Poolings view ``x`` as ``(outer, *spatial, inner)`` (``inner`` is 1, or the
channels when ``channel_last``) and loop over the kernel offsets, vectorised
over every output. These generic kernels are the reference for other backends;
:mod:`.native` overrides the window loops (``im2col``, ``col2im``, pooling) with
C++.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ._base import Kernel


# ------------------------------------------------------------------ geometry
@dataclass(frozen=True)
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


def im2col(xp, x, g):
    """Column buffer of image ``x`` (shape ``g.col_shape``); out-of-image taps are 0."""
    xpad = _with_padding(xp, x.reshape(g.image_shape), g)
    col = xp.empty(g.col_shape, dtype=x.dtype)
    lead = (slice(None),) * (2 + len(g.kernel))
    for k in itertools.product(*map(range, g.kernel)):
        patch = xpad[_spatial_index(g, _tap_slices(g, k))]
        if g.channel_last:
            col[lead + k] = patch.reshape(patch.shape[:-1] + (g.groups, g.channels // g.groups))
        else:
            col[(slice(None),) + k] = patch.swapaxes(0, 1)
    return col


def col2im(xp, col, g):
    """Adjoint of :func:`im2col`: sums every column entry back into its image pixel."""
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
    crop = tuple(slice(a, a + i) for i, (a, _) in zip(g.in_shape, widths))
    return xp.ascontiguousarray(xpad[_spatial_index(g, crop)])


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


def gemm_as_maps(xp, g, m, shape):
    """Inverse of :func:`maps_as_gemm`, as a C-contiguous array of ``shape``."""
    channels = m.shape[0] * m.shape[1]
    if g.channel_last:
        m = m.reshape(channels, g.pixels).T
    else:
        m = m.reshape(channels, g.batch, g.out_pixels).transpose(1, 0, 2)
    return xp.ascontiguousarray(m).reshape(shape)


def add_bias(y, bias, channel_axis):
    shape = [1] * y.ndim
    shape[channel_axis] = -1
    return y + bias.reshape(shape)


def bias_grad(dy, channel_axis):
    return dy.sum(axis=tuple(a for a in range(dy.ndim) if a != channel_axis))


# ------------------------------------------------------------------- affine
class Affine(Kernel):
    """y = x.reshape(M, K) @ w.reshape(K, L) + b."""

    def setup(self):
        x, w = self.in_shapes[:2]
        self.m, self.k, self.l = math.prod(x[:self.base_axis]), w[0], math.prod(w[1:])

    def forward(self, xs):
        x, w, b = (list(xs) + [None])[:3]
        y = x.reshape(self.m, self.k) @ w.reshape(self.k, self.l)
        if b is not None:
            y += b.reshape(self.l)
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        x, w = xs[:2]
        dy = dys[0].reshape(self.m, self.l)
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = (dy @ w.reshape(self.k, self.l).T).reshape(self.in_shapes[0])
        if propagate_down[1]:
            grads[1] = (x.reshape(self.m, self.k).T @ dy).reshape(self.in_shapes[1])
        if len(self.in_shapes) > 2 and self.in_shapes[2] is not None and propagate_down[2]:
            grads[2] = dy.sum(axis=0).reshape(self.in_shapes[2])
        return grads


# ------------------------------------------------------------- convolutions
class _ConvBase(Kernel):
    """Shared setup: geometry, grouped weight view, the im2col/col2im hooks."""

    depthwise = False

    def setup(self):
        w = self.in_shapes[1]
        n = len(self.in_shapes[0]) - self.base_axis - 1
        channel_last = getattr(self, "channel_last", False)
        kernel = w[1:] if self.depthwise else (w[1:1 + n] if channel_last else w[2:])
        image, grid = self.image_and_grid()
        self.geo = conv_geometry(image, grid, kernel, (self.pad, self.stride, self.dilation),
                                 self.base_axis, self.groups(), channel_last)
        self.channel_axis = self.base_axis + n if channel_last else self.base_axis

    def im2col(self, x):
        return im2col(self.xp, x, self.geo)

    def col2im(self, col):
        return col2im(self.xp, col, self.geo)

    def weight_gemm(self, w):
        """The weight as (groups, channels per group on the grid side, rows)."""
        groups = self.geo.groups
        return w.reshape(groups, w.shape[0] // groups, self.geo.rows)

    def has_bias(self):
        # From the shapes: backward may get None for data it does not need (bias).
        return len(self.in_shapes) > 2 and self.in_shapes[2] is not None

    def spatial(self, shape):
        """The spatial part of a feature-map shape (batch and channel axes removed)."""
        if getattr(self, "channel_last", False):
            return shape[self.base_axis:-1]
        return shape[self.base_axis + 1:]


class Convolution(_ConvBase):
    """y = W @ im2col(x) per group; the image is x, the output grid is y."""

    def image_and_grid(self):
        return self.in_shapes[0], self.spatial(self.out_shapes[0])

    def groups(self):
        return self.group

    def forward(self, xs):
        g, xp = self.geo, self.xp
        y = xp.matmul(self.weight_gemm(xs[1]), cols_as_gemm(g, self.im2col(xs[0])))
        y = gemm_as_maps(xp, g, y, self.out_shapes[0])
        return (add_bias(y, xs[2], self.channel_axis) if self.has_bias() else y,)

    def backward(self, xs, ys, dys, propagate_down):
        g, xp = self.geo, self.xp
        grads = [None] * len(xs)
        if propagate_down[0] or propagate_down[1]:
            dy = maps_as_gemm(g, dys[0], self.out_shapes[0][self.channel_axis])
        if propagate_down[0]:
            dcol = xp.matmul(self.weight_gemm(xs[1]).transpose(0, 2, 1), dy)
            grads[0] = self.col2im(gemm_as_cols(xp, g, dcol)).reshape(self.in_shapes[0])
        if propagate_down[1]:
            cols = cols_as_gemm(g, self.im2col(xs[0]))
            grads[1] = xp.matmul(dy, cols.transpose(0, 2, 1)).reshape(self.in_shapes[1])
        if self.has_bias() and propagate_down[2]:
            grads[2] = bias_grad(dys[0], self.channel_axis)
        return grads


class Deconvolution(_ConvBase):
    """y = col2im(W^T @ x) per group; the image is y, the output grid is x."""

    def image_and_grid(self):
        return self.out_shapes[0], self.spatial(self.in_shapes[0])

    def groups(self):
        return self.group

    def forward(self, xs):
        g, xp = self.geo, self.xp
        xm = maps_as_gemm(g, xs[0], self.in_shapes[0][self.channel_axis])
        col = xp.matmul(self.weight_gemm(xs[1]).transpose(0, 2, 1), xm)
        y = self.col2im(gemm_as_cols(xp, g, col)).reshape(self.out_shapes[0])
        return (add_bias(y, xs[2], self.channel_axis) if self.has_bias() else y,)

    def backward(self, xs, ys, dys, propagate_down):
        g, xp = self.geo, self.xp
        grads = [None] * len(xs)
        if propagate_down[0] or propagate_down[1]:
            cols = cols_as_gemm(g, self.im2col(dys[0]))
        if propagate_down[0]:
            dx = xp.matmul(self.weight_gemm(xs[1]), cols)
            grads[0] = gemm_as_maps(xp, g, dx, self.in_shapes[0])
        if propagate_down[1]:
            xm = maps_as_gemm(g, xs[0], self.in_shapes[0][self.channel_axis])
            grads[1] = xp.matmul(xm, cols.transpose(0, 2, 1)).reshape(self.in_shapes[1])
        if self.has_bias() and propagate_down[2]:
            grads[2] = bias_grad(dys[0], self.channel_axis)
        return grads


class DepthwiseConvolution(Convolution):
    """A convolution with one group per input channel, ``multiplier`` filters each."""

    depthwise = True

    def groups(self):
        return self.in_shapes[0][self.base_axis]


class DepthwiseDeconvolution(Deconvolution):
    """A deconvolution with one group per output channel, ``divisor`` inputs each."""

    depthwise = True

    def groups(self):
        return self.in_shapes[0][self.base_axis] // self.divisor


# ----------------------------------------------------------------- poolings
@dataclass(frozen=True)
class PoolGeometry:
    """A pooling over ``x`` viewed as ``(outer, *in_shape, inner)``."""

    outer: int
    inner: int
    in_shape: tuple
    out_shape: tuple
    kernel: tuple
    stride: tuple
    pad: tuple

    @property
    def x_view(self):
        return (self.outer,) + self.in_shape + (self.inner,)

    @property
    def y_view(self):
        return (self.outer,) + self.out_shape + (self.inner,)


def pool_geometry(x, y, kernel, stride, pad, channel_last):
    n = len(kernel)
    first = len(x) - n - (1 if channel_last else 0)
    return PoolGeometry(math.prod(x[:first]), math.prod(x[first + n:]),
                        tuple(x[first:first + n]), tuple(y[first:first + n]),
                        tuple(kernel), tuple(stride), tuple(pad))


def _pool_taps(g, j):
    full = slice(None)
    return (full,) + tuple(slice(ji, ji + (o - 1) * s + 1, s)
                           for ji, o, s in zip(j, g.out_shape, g.stride)) + (full,)


def _pool_pad(g):
    return [(0, 0)] + [(p, max(0, (o - 1) * s + k - p - i)) for p, o, s, k, i in
                       zip(g.pad, g.out_shape, g.stride, g.kernel, g.in_shape)] + [(0, 0)]


def _pool_crop(g):
    full = slice(None)
    return (full,) + tuple(slice(p, p + i) for p, i in zip(g.pad, g.in_shape)) + (full,)


def _offsets(g):
    return itertools.product(*map(range, g.kernel))


def max_pool(xp, x, g):
    """Window maxima and, per output, the position (kernel offset number) of the first max.

    Padding is -inf, so it never wins (the spec rules out all-padding windows).
    """
    xpad = xp.pad(x.reshape(g.x_view), _pool_pad(g), constant_values=-xp.inf)
    y = arg = None
    for number, j in enumerate(_offsets(g)):
        v = xpad[_pool_taps(g, j)]
        if y is None:
            y, arg = v.copy(), xp.zeros(v.shape, dtype=xp.int64)
            continue
        better = v > y
        xp.copyto(y, v, where=better)
        arg[better] = number
    return y, arg


def max_pool_grad(xp, dy, arg, g):
    dxpad = xp.zeros([i + a + b for i, (a, b) in zip(g.x_view, _pool_pad(g))], dtype=dy.dtype)
    dy = dy.reshape(g.y_view)
    for number, j in enumerate(_offsets(g)):
        dxpad[_pool_taps(g, j)] += xp.where(arg == number, dy, 0)
    return xp.ascontiguousarray(dxpad[_pool_crop(g)])


def pool_divisor(xp, g, including_pad, dtype):
    """Per-output window sizes under nnabla's rule, shaped to broadcast over ``y_view``."""
    size = 1
    for axis, (i, o, k, s, p) in enumerate(zip(g.in_shape, g.out_shape, g.kernel, g.stride,
                                               g.pad)):
        start = xp.arange(o) * s - p
        end = xp.minimum(start + k, i + p)   # windows stop at the far padding edge
        if not including_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, i)
        shape = [1] * (len(g.in_shape) + 2)
        shape[axis + 1] = o
        size = size * (end - start).reshape(shape)
    return xp.asarray(size, dtype=dtype)


def sum_pool(xp, x, g):
    xpad = xp.pad(x.reshape(g.x_view), _pool_pad(g))
    y = None
    for j in _offsets(g):
        v = xpad[_pool_taps(g, j)]
        y = v.copy() if y is None else y + v
    return y


def sum_pool_grad(xp, dy, g):
    dxpad = xp.zeros([i + a + b for i, (a, b) in zip(g.x_view, _pool_pad(g))], dtype=dy.dtype)
    dy = dy.reshape(g.y_view)
    for j in _offsets(g):
        dxpad[_pool_taps(g, j)] += dy
    return xp.ascontiguousarray(dxpad[_pool_crop(g)])


class _Pooling(Kernel):
    def setup(self):
        self.geo = pool_geometry(self.in_shapes[0], self.out_shapes[0], self.kernel,
                                 self.stride, self.pad, self.channel_last)


class MaxPooling(_Pooling):
    """Keeps the argmax of the last forward for backward (recomputed if absent)."""

    _state = None

    def max_forward(self, x):
        """(y, state for max_backward)."""
        return max_pool(self.xp, x, self.geo)

    def max_backward(self, dy, state):
        return max_pool_grad(self.xp, dy, state, self.geo)

    def forward(self, xs):
        y, self._state = self.max_forward(xs[0])
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        if self._state is None:
            self._state = self.max_forward(xs[0])[1]
        return [self.max_backward(dys[0], self._state).reshape(self.in_shapes[0])]


class SumPooling(_Pooling):
    average = False

    def pool_forward(self, x):
        y = sum_pool(self.xp, x, self.geo)
        if self.average:
            y = y / pool_divisor(self.xp, self.geo, self.including_pad, y.dtype)
        return y

    def pool_backward(self, dy):
        if self.average:
            dy = dy.reshape(self.geo.y_view) / pool_divisor(self.xp, self.geo,
                                                            self.including_pad, dy.dtype)
        return sum_pool_grad(self.xp, dy, self.geo)

    def forward(self, xs):
        return (self.pool_forward(xs[0]).reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        return [self.pool_backward(dys[0]).reshape(self.in_shapes[0])]


class AveragePooling(SumPooling):
    average = True


class GlobalAveragePooling(Kernel):
    """Mean over every axis after axis 1."""

    def forward(self, xs):
        x = xs[0]
        pixels = math.prod(x.shape[2:])
        return (x.reshape(x.shape[:2] + (pixels,)).mean(axis=2).reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        x = self.in_shapes[0]
        size = math.prod(x[2:])
        dx = self.xp.empty((x[0], x[1], size), dtype=dys[0].dtype)
        dx[...] = dys[0].reshape(x[0], x[1], 1) / size
        return [dx.reshape(x)]


class Unpooling(Kernel):
    """Each value repeated ``kernel[i]`` times along spatial axis i."""

    def setup(self):
        x, n = self.in_shapes[0], len(self.kernel)
        first = len(x) - n - (1 if self.channel_last else 0)
        spatial = x[first:first + n]
        self.split = x[:first] + sum(((s, 1) for s in spatial), ()) + x[first + n:]
        self.blocks = x[:first] + sum(((s, k) for s, k in zip(spatial, self.kernel)), ()) \
            + x[first + n:]
        self.repeat_axes = tuple(first + 2 * i + 1 for i in range(n))

    def forward(self, xs):
        y = self.xp.empty(self.blocks, dtype=xs[0].dtype)
        y[...] = xs[0].reshape(self.split)
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        dx = dys[0].reshape(self.blocks).sum(axis=self.repeat_axes)
        return [dx.reshape(self.in_shapes[0])]


class Embed(Kernel):
    """y = w[x0]; indices outside [0, len(w)) raise instead of reading other memory."""

    def check_indices(self, x0):
        rows = self.in_shapes[1][0]
        if x0.size and (int(x0.min()) < 0 or int(x0.max()) >= rows):
            bad = x0[(x0 < 0) | (x0 >= rows)].ravel()[0]
            raise ValueError(f"{self.spec.api_name}: argument 'x0' holds index {int(bad)}; "
                             f"expected indices in [0, {rows}) (w has shape "
                             f"{tuple(self.in_shapes[1])})")

    def forward(self, xs):
        self.check_indices(xs[0])
        return (self.xp.take(xs[1], xs[0], axis=0),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[1]:
            return [None, None]
        w = self.in_shapes[1]
        dw = self.xp.zeros((w[0], math.prod(w[1:])), dtype=dys[0].dtype)
        self.xp.add.at(dw, xs[0].ravel(), dys[0].reshape(xs[0].size, dw.shape[1]))
        return [None, dw.reshape(w)]


KERNELS = {
    "Affine": Affine,
    "Convolution": Convolution,
    "Deconvolution": Deconvolution,
    "DepthwiseConvolution": DepthwiseConvolution,
    "DepthwiseDeconvolution": DepthwiseDeconvolution,
    "MaxPooling": MaxPooling,
    "AveragePooling": AveragePooling,
    "SumPooling": SumPooling,
    "GlobalAveragePooling": GlobalAveragePooling,
    "Unpooling": Unpooling,
    "Embed": Embed,
}
