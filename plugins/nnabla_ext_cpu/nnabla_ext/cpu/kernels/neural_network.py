"""Kernels of the neural network layers, written against ``xp``.

Convolutions are im2col + one batched GEMM (``xp.matmul`` over the groups) per chunk of
samples, backward is two GEMMs + col2im per chunk (the column math is in
:mod:`._columns`). Poolings view ``x`` as ``(outer, *spatial, inner)`` (``inner`` is 1,
or the channels when ``channel_last``) and loop over the kernel offsets, vectorised over
every output. These generic kernels are the reference for other backends; :mod:`.native`
overrides the window loops (``im2col``, ``col2im``, pooling) with C++.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from ._base import Kernel
from ._columns import (COLUMN_BUDGET, add_bias, bias_grad, col2im, cols_as_gemm,
                       conv_geometry, gemm_as_cols, im2col, maps_as_gemm, sample_chunks,
                       store_maps)


# ------------------------------------------------------------------- affine
class Affine(Kernel):
    """y = x.reshape(M, K) @ w.reshape(K, L) + b.

    Reshapes are made only where a shape differs from the matrix shape (an MLP's
    hidden layers are already matrices): the arithmetic is the same either way.
    """

    def setup(self):
        x, w = self.in_shapes[:2]
        self.m, self.k, self.l = math.prod(x[:self.base_axis]), w[0], math.prod(w[1:])
        m, k, n = self.m, self.k, self.l
        b = self.in_shapes[2] if len(self.in_shapes) > 2 else None
        self.has_bias = b is not None
        # the shape to view each operand in, or None when it already has it
        self.x_as = None if tuple(x) == (m, k) else (m, k)
        self.w_as = None if tuple(w) == (k, n) else (k, n)
        self.b_as = None if b is None or tuple(b) == (n,) else (n,)
        self.y_as = None if tuple(self.out_shapes[0]) == (m, n) else tuple(self.out_shapes[0])

    def forward(self, xs):
        x, w = xs[0], xs[1]
        if self.x_as is not None:
            x = x.reshape(self.x_as)
        if self.w_as is not None:
            w = w.reshape(self.w_as)
        y = x @ w
        b = xs[2] if len(xs) > 2 else None
        if b is not None:
            y += b if self.b_as is None else b.reshape(self.b_as)
        return (y if self.y_as is None else y.reshape(self.y_as),)

    def backward(self, xs, ys, dys, propagate_down):
        x, w = xs[0], xs[1]
        dy = dys[0] if self.y_as is None else dys[0].reshape(self.m, self.l)
        grads = [None] * len(xs)
        if propagate_down[0]:
            g = dy @ (w if self.w_as is None else w.reshape(self.w_as)).T
            grads[0] = g if self.x_as is None else g.reshape(self.in_shapes[0])
        if propagate_down[1]:
            g = (x if self.x_as is None else x.reshape(self.x_as)).T @ dy
            grads[1] = g if self.w_as is None else g.reshape(self.in_shapes[1])
        if self.has_bias and propagate_down[2]:
            g = dy.sum(axis=0)
            grads[2] = g if self.b_as is None else g.reshape(self.in_shapes[2])
        return grads


# ------------------------------------------------------------- convolutions
class _ConvBase(Kernel):
    """Shared setup: geometry, sample chunks, grouped weight view, the im2col/col2im hooks.

    Every pass walks the batch in ``self.chunks`` (see :func:`._columns.sample_chunks`),
    so a column buffer never holds more than ``column_budget`` elements (or one sample).
    """

    depthwise = False
    column_budget = COLUMN_BUDGET

    def setup(self):
        w = self.in_shapes[1]
        n = len(self.in_shapes[0]) - self.base_axis - 1
        channel_last = getattr(self, "channel_last", False)
        kernel = w[1:] if self.depthwise else (w[1:1 + n] if channel_last else w[2:])
        image, grid = self.image_and_grid()
        self.geo = conv_geometry(image, grid, kernel, (self.pad, self.stride, self.dilation),
                                 self.base_axis, self.groups(), channel_last)
        self.chunks = sample_chunks(self.geo, self.column_budget)
        self.channel_axis = self.base_axis + n if channel_last else self.base_axis
        # channels of the maps on the output grid: a convolution's y, a deconvolution's x
        grid_maps = self.out_shapes[0] if self.grid_is_output else self.in_shapes[0]
        self.grid_channels = grid_maps[self.channel_axis]

    def im2col(self, x, g, out=None):
        return im2col(self.xp, x, g, out)

    def col2im(self, col, g, out=None):
        return col2im(self.xp, col, g, out)

    def weight_gemm(self, w):
        """The weight as (groups, channels per group on the grid side, rows)."""
        groups = self.geo.groups
        return w.reshape(groups, w.shape[0] // groups, self.geo.rows)

    def per_sample(self, a):
        """``a`` (a batch of images or grids) as (batch, elements per sample)."""
        return a.reshape(self.geo.batch, math.prod(a.shape[self.base_axis:]))

    def empty_like_samples(self, shape, *operands):
        """An uninitialised (batch, elements per sample) array for a result of ``shape``."""
        dtype = self.xp.result_type(*operands)
        return self.xp.empty((self.geo.batch, math.prod(shape[self.base_axis:])), dtype=dtype)

    def column_buffer(self, dtype):
        """One flat buffer for the columns of the largest chunk (the first)."""
        return self.xp.empty(self.chunks[0][2].col_size if self.chunks else 0, dtype=dtype)

    def unfold(self, image, g, buffer):
        """The columns of ``image`` (samples of geometry ``g``) as GEMM operand."""
        return cols_as_gemm(g, self.im2col(image, g, buffer[:g.col_size]))

    def fold(self, w, grid, g, out):
        """``out`` = col2im(W^T @ grid) for a chunk; ``grid`` in GEMM layout.

        Channel-last columns are (pixels, groups, rows): there the product is taken as
        grid^T @ W, written straight into them, instead of transposing W^T @ grid.
        """
        if g.channel_last:
            cols = self.xp.empty((g.pixels, g.groups, g.rows), self.xp.result_type(w, grid))
            self.xp.matmul(grid.transpose(0, 2, 1), w, out=cols.transpose(1, 0, 2))
            self.col2im(cols.reshape(g.col_shape), g, out)
            return
        self.col2im(gemm_as_cols(self.xp, g, self.xp.matmul(w.transpose(0, 2, 1), grid)), g,
                    out)

    def project(self, w, cols, g, out):
        """``out`` (maps on the grid of the chunk ``g``) = W @ cols, per group.

        Channel-last maps are (pixels, groups, channels per group): there the product is
        taken as cols^T @ W^T, written straight into ``out``, instead of transposing it.
        """
        if g.channel_last:
            maps = out.reshape(g.pixels, g.groups, w.shape[1]).transpose(1, 0, 2)
            self.xp.matmul(cols.transpose(0, 2, 1), w.transpose(0, 2, 1), out=maps)
            return
        store_maps(g, self.xp.matmul(w, cols), out)

    def weight_grad(self, dw, grid, cols):
        """dw + grid @ cols^T (the weight gradient of one chunk, summed over chunks)."""
        part = self.xp.matmul(grid, cols.transpose(0, 2, 1))
        if dw is None:
            return part
        dw += part
        return dw

    def finish_weight_grad(self, dw, *operands):
        if dw is None:   # an empty batch
            dw = self.xp.zeros(self.in_shapes[1], dtype=self.xp.result_type(*operands))
        return dw.reshape(self.in_shapes[1])

    def has_bias(self):
        # From the shapes: backward may get None for data it does not need (bias).
        return len(self.in_shapes) > 2 and self.in_shapes[2] is not None

    def spatial(self, shape):
        """The spatial part of a feature-map shape (batch and channel axes removed)."""
        if getattr(self, "channel_last", False):
            return shape[self.base_axis:-1]
        return shape[self.base_axis + 1:]

    def backward(self, xs, ys, dys, propagate_down):
        grads = [None] * len(xs)
        if propagate_down[0] or propagate_down[1]:
            grads[:2] = self.data_grads(xs[0], xs[1], dys[0], propagate_down[:2])
        if self.has_bias() and propagate_down[2]:
            grads[2] = bias_grad(dys[0], self.channel_axis)
        return grads


class Convolution(_ConvBase):
    """y = W @ im2col(x) per group; the image is x, the output grid is y."""

    grid_is_output = True

    def image_and_grid(self):
        return self.in_shapes[0], self.spatial(self.out_shapes[0])

    def groups(self):
        return self.group

    def forward(self, xs):
        x, w = self.per_sample(xs[0]), self.weight_gemm(xs[1])
        y = self.empty_like_samples(self.out_shapes[0], xs[0], xs[1])
        buffer = self.column_buffer(x.dtype)
        for start, stop, g in self.chunks:
            self.project(w, self.unfold(x[start:stop], g, buffer), g, y[start:stop])
        y = y.reshape(self.out_shapes[0])
        return (add_bias(self.xp, y, xs[2], self.channel_axis) if self.has_bias() else y,)

    def data_grads(self, x, w, dy, wanted):
        """(dx, dw), each None unless wanted, a chunk of samples at a time."""
        w, dx, dw = self.weight_gemm(w), None, None
        dym = self.per_sample(dy)
        if wanted[0]:
            dx = self.empty_like_samples(self.in_shapes[0], w, dy)
        if wanted[1]:
            x = self.per_sample(x)
            buffer = self.column_buffer(x.dtype)
        for start, stop, g in self.chunks:
            grid = maps_as_gemm(g, dym[start:stop], self.grid_channels)
            if wanted[0]:
                self.fold(w, grid, g, dx[start:stop])
            if wanted[1]:
                dw = self.weight_grad(dw, grid, self.unfold(x[start:stop], g, buffer))
        if wanted[1]:
            dw = self.finish_weight_grad(dw, x, dy)
        return (None if dx is None else dx.reshape(self.in_shapes[0]), dw)


class Deconvolution(_ConvBase):
    """y = col2im(W^T @ x) per group; the image is y, the output grid is x."""

    grid_is_output = False

    def image_and_grid(self):
        return self.out_shapes[0], self.spatial(self.in_shapes[0])

    def groups(self):
        return self.group

    def forward(self, xs):
        x, w = self.per_sample(xs[0]), self.weight_gemm(xs[1])
        y = self.empty_like_samples(self.out_shapes[0], xs[0], xs[1])
        for start, stop, g in self.chunks:
            self.fold(w, maps_as_gemm(g, x[start:stop], self.grid_channels), g,
                      y[start:stop])
        y = y.reshape(self.out_shapes[0])
        return (add_bias(self.xp, y, xs[2], self.channel_axis) if self.has_bias() else y,)

    def data_grads(self, x, w, dy, wanted):
        """(dx, dw), each None unless wanted: both read the columns of dy."""
        w, dx, dw = self.weight_gemm(w), None, None
        dyi = self.per_sample(dy)
        if wanted[0]:
            dx = self.empty_like_samples(self.in_shapes[0], w, dy)
        if wanted[1]:
            x = self.per_sample(x)
        buffer = self.column_buffer(dy.dtype)
        for start, stop, g in self.chunks:
            cols = self.unfold(dyi[start:stop], g, buffer)
            if wanted[0]:
                self.project(w, cols, g, dx[start:stop])
            if wanted[1]:
                grid = maps_as_gemm(g, x[start:stop], self.grid_channels)
                dw = self.weight_grad(dw, grid, cols)
        if wanted[1]:
            dw = self.finish_weight_grad(dw, x, dy)
        return (None if dx is None else dx.reshape(self.in_shapes[0]), dw)


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
