"""Kernels of the array-manipulation functions, written against ``xp``.

Forward outputs never alias the inputs (the engine may reuse or write into an
output buffer); gradients may be views of ``dy``. Index-taking kernels validate
their indices, since reading out of range would silently return garbage.
"""
from __future__ import annotations

import math

import numpy as np

from ._base import Kernel, unbroadcast


def _along(ndim, axis, index):
    """An index tuple selecting ``index`` on ``axis`` and everything elsewhere."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def take_grad(xp, g, idx, n, axis, run):
    """Transpose of ``x.take(idx, axis)`` for an index map that is mostly a shift.

    ``run = (a, b, src)``: output positions a..b-1 read sources src, src+1, ...;
    they are copied at once, and each remaining (border) position is added on
    its own, so repeated sources accumulate without a slow scatter.
    """
    a, b, src = run
    nd = g.ndim
    out = xp.zeros(g.shape[:axis] + (n,) + g.shape[axis + 1:], dtype=g.dtype)
    out[_along(nd, axis, slice(src, src + b - a))] = g[_along(nd, axis, slice(a, b))]
    for k in [*range(a), *range(b, g.shape[axis])]:
        out[_along(nd, axis, int(idx[k]))] += g[_along(nd, axis, k)]
    return out


def reflect_index(xp, pos, n):
    """Mirror positions into [0, n) without repeating the edge (period 2n - 2)."""
    if n == 1:
        return xp.zeros_like(pos)
    m = pos % (2 * n - 2)
    return xp.where(m < n, m, 2 * n - 2 - m)


def symmetric_index(xp, pos, n):
    """Mirror positions into [0, n) repeating the edge (period 2n)."""
    m = pos % (2 * n)
    return xp.where(m < n, m, 2 * n - 1 - m)


def _index_error(kernel, name, low, high, idx):
    bad = idx[(idx < low) | (idx >= high)]
    return ValueError(f"{kernel.spec.api_name}: argument '{name}' holds index "
                      f"{int(bad.flat[0])}; expected indices in [{low}, {high})")


def _check_range(kernel, name, idx, low, high):
    if idx.size and (int(idx.min()) < low or int(idx.max()) >= high):
        raise _index_error(kernel, name, low, high, idx)


class Concatenate(Kernel):
    def setup(self):
        self.ax = self.axis % len(self.in_shapes[0])
        ends = np.cumsum([s[self.ax] for s in self.in_shapes])
        self.bounds = list(zip([0, *ends[:-1].tolist()], ends.tolist()))

    def forward(self, xs):
        return (self.xp.concatenate(xs, axis=self.ax),)

    def backward(self, xs, ys, dys, propagate_down):
        nd = dys[0].ndim
        return [dys[0][_along(nd, self.ax, slice(a, b))] if pd else None
                for (a, b), pd in zip(self.bounds, propagate_down)]


class Split(Kernel):
    def setup(self):
        self.ax = self.axis % len(self.in_shapes[0])

    def forward(self, xs):
        parts = self.xp.moveaxis(xs[0], self.ax, 0)
        return tuple(p.copy() for p in parts)

    def backward(self, xs, ys, dys, propagate_down):
        xp = self.xp
        part = self.out_shapes[0] if self.out_shapes else None
        # An output nobody differentiated arrives as None: it contributes zeros.
        dys = [xp.zeros(part, dtype=np.float32) if d is None else d for d in dys]
        if not dys:
            return [xp.zeros(self.in_shapes[0], dtype=np.float32)]
        return [xp.stack(dys, axis=self.ax)]


class Stack(Kernel):
    def setup(self):
        self.ax = self.axis % (len(self.in_shapes[0]) + 1)

    def forward(self, xs):
        return (self.xp.stack(xs, axis=self.ax),)

    def backward(self, xs, ys, dys, propagate_down):
        parts = self.xp.moveaxis(dys[0], self.ax, 0)
        return [parts[i] if pd else None for i, pd in enumerate(propagate_down)]


class Slice(Kernel):
    def setup(self):
        self.index = tuple(slice(a, b, c) for a, b, c in zip(self.start, self.stop, self.step))

    def forward(self, xs):
        return (xs[0][self.index].copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        g = self.xp.zeros(self.in_shapes[0], dtype=dys[0].dtype)
        g[self.index] = dys[0]
        return [g]


class Pad(Kernel):
    """Constant, reflect (mirror without edge) or repeat (edge) padding of the last axes."""

    def setup(self):
        shape = self.in_shapes[0]
        lead = len(shape) - len(self.pad_width) // 2
        self.widths = [(0, 0)] * lead + list(zip(self.pad_width[::2], self.pad_width[1::2]))
        # Per padded axis: the source index of every output position.
        self.maps = {}
        for ax, (before, after) in enumerate(self.widths):
            n = shape[ax]
            if (before or after) and self.mode != "constant":
                pos = np.arange(-before, n + after)
                self.maps[ax] = (reflect_index(np, pos, n) if self.mode == "reflect"
                                 else np.clip(pos, 0, n - 1))

    def forward(self, xs):
        xp = self.xp
        if self.mode == "constant":
            return (xp.pad(xs[0], self.widths, constant_values=self.constant_value),)
        y = xs[0]
        for ax, idx in self.maps.items():
            y = xp.take(y, xp.asarray(idx), axis=ax)
        return (y if self.maps else y.copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        g = dys[0]
        shape = self.in_shapes[0]
        if self.mode == "constant":
            return [g[tuple(slice(b, b + n) for (b, _), n in zip(self.widths, shape))]]
        for ax in sorted(self.maps, reverse=True):
            before = self.widths[ax][0]
            run = (before, before + shape[ax], 0)
            g = take_grad(self.xp, g, self.maps[ax], shape[ax], ax, run)
        return [g]


class Transpose(Kernel):
    def setup(self):
        ndim = len(self.in_shapes[0])
        self.perm = tuple(a % ndim for a in self.axes)
        self.inverse = tuple(np.argsort(self.perm).tolist())

    def forward(self, xs):
        return (self.xp.transpose(xs[0], self.perm).copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        return [self.xp.transpose(dys[0], self.inverse)]


class Reshape(Kernel):
    def forward(self, xs):
        return (xs[0].reshape(self.out_shapes[0]).copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0].reshape(self.in_shapes[0])]


class Broadcast(Kernel):
    def forward(self, xs):
        return (self.xp.broadcast_to(xs[0], self.out_shapes[0]).copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        x_shape = tuple(self.in_shapes[0])
        g = dys[0]
        extra = g.ndim - len(x_shape)
        if extra:
            g = g.sum(axis=tuple(range(extra)))
        return [unbroadcast(self.xp, g, x_shape)]


class BroadcastTo(Kernel):
    def setup(self):
        x, y = self.in_shapes
        start = len(x) - len(y) if self.axis < 0 else self.axis
        self.y_view = (1,) * start + tuple(y) + (1,) * (len(x) - start - len(y))

    def forward(self, xs):
        y = xs[1].reshape(self.y_view)
        return (self.xp.broadcast_to(y, self.out_shapes[0]).copy(),)


class Tile(Kernel):
    def setup(self):
        x = tuple(self.in_shapes[0])
        n = max(len(x), len(self.reps))
        self.x_full = (1,) * (n - len(x)) + x
        self.reps_full = (1,) * (n - len(self.reps)) + tuple(self.reps)

    def forward(self, xs):
        return (self.xp.tile(xs[0].reshape(self.x_full), self.reps_full),)

    def backward(self, xs, ys, dys, propagate_down):
        # y viewed as (r0, s0, r1, s1, ...): every copy of x sums into it.
        interleaved = [d for pair in zip(self.reps_full, self.x_full) for d in pair]
        rep_axes = tuple(2 * i for i, r in enumerate(self.reps_full) if r > 1)
        g = dys[0].reshape(interleaved)
        # Summing only the repeated axes keeps numpy on its fast reduction path.
        g = g.sum(axis=rep_axes) if rep_axes else g
        return [g.reshape(self.in_shapes[0])]


class Flip(Kernel):
    def setup(self):
        ndim = len(self.in_shapes[0])
        axes = {a % ndim for a in self.axes}
        self.index = tuple(slice(None, None, -1) if i in axes else slice(None)
                           for i in range(ndim))

    def forward(self, xs):
        return (xs[0][self.index].copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0][self.index]]


class OneHot(Kernel):
    """nnabla's meaning of indices: a negative index counts from the end of its axis, and a
    row with an index still outside its axis is all zeros (nnabla's own tests define it)."""

    def forward(self, xs):
        xp = self.xp
        shape = tuple(self.shape)
        idx = xs[0].reshape(-1, len(shape))
        limits = xp.asarray(shape)
        idx = xp.where(idx < 0, idx + limits, idx)
        valid = ((idx >= 0) & (idx < limits)).all(axis=1)
        strides = xp.asarray([math.prod(shape[i + 1:]) for i in range(len(shape))])
        flat = xp.where(valid, idx @ strides, 0)
        y = xp.zeros((idx.shape[0], math.prod(shape)), dtype=np.float32)
        y[xp.arange(idx.shape[0]), flat] = valid
        return (y.reshape(self.out_shapes[0]),)


class Shift(Kernel):
    def setup(self):
        shape = self.in_shapes[0]
        mirror = self.border_mode == "reflect"
        self.maps = {}
        for ax, (n, s) in enumerate(zip(shape, self.shifts)):
            if s and n:
                pos = np.arange(n) - s
                self.maps[ax] = (symmetric_index(np, pos, n) if mirror
                                 else np.clip(pos, 0, n - 1))

    def forward(self, xs):
        y = xs[0]
        for ax, idx in self.maps.items():
            y = self.xp.take(y, self.xp.asarray(idx), axis=ax)
        return (y if self.maps else y.copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        g = dys[0]
        for ax in sorted(self.maps, reverse=True):
            n, s = g.shape[ax], self.shifts[ax]
            run = (min(max(s, 0), n), min(max(n + s, 0), n), max(-s, 0))
            g = take_grad(self.xp, g, self.maps[ax], n, ax, run)
        return [g]


class Sort(Kernel):
    def setup(self):
        self.ax = self.axis % len(self.in_shapes[0])

    def forward(self, xs):
        xp, x = self.xp, xs[0]
        # Stable on the negated values keeps equal elements in input order when reversed.
        self.order = xp.argsort(-x if self.reverse else x, axis=self.ax, kind="stable")
        index = self.order.astype(np.uint64)
        if self.only_index:
            return (index,)
        y = xp.take_along_axis(x, self.order, axis=self.ax)
        return (y, index) if self.with_index else (y,)

    def backward(self, xs, ys, dys, propagate_down):
        if self.only_index or dys[0] is None:
            return [self.xp.zeros(self.in_shapes[0], dtype=np.float32)]
        g = self.xp.empty(self.in_shapes[0], dtype=dys[0].dtype)
        self.xp.put_along_axis(g, self.order, dys[0], axis=self.ax)
        return [g]


class MatrixDiag(Kernel):
    def forward(self, xs):
        n = self.in_shapes[0][-1]
        return (xs[0][..., None] * self.xp.eye(n, dtype=xs[0].dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [self.xp.diagonal(dys[0], axis1=-2, axis2=-1)]


class MatrixDiagPart(Kernel):
    def forward(self, xs):
        return (self.xp.diagonal(xs[0], axis1=-2, axis2=-1).copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        n = self.in_shapes[0][-1]
        return [dys[0][..., None] * self.xp.eye(n, dtype=dys[0].dtype)]


class Trilu(Kernel):
    def setup(self):
        m, n = self.in_shapes[0][-2:]
        ones = np.ones((m, n), dtype=bool)
        self.mask = np.triu(ones, self.k) if self.upper else np.tril(ones, self.k)

    def forward(self, xs):
        return (xs[0] * self.xp.asarray(self.mask, dtype=xs[0].dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0] * self.xp.asarray(self.mask, dtype=dys[0].dtype)]


class Meshgrid(Kernel):
    def setup(self):
        n = len(self.in_shapes)
        # Output axis that input i runs along ('xy' swaps the first two).
        self.axis_of = list(range(n))
        if not self.ij_indexing and n > 1:
            self.axis_of[0], self.axis_of[1] = 1, 0

    def forward(self, xs):
        grids = self.xp.meshgrid(*xs, indexing="ij" if self.ij_indexing else "xy")
        return tuple(g.copy() for g in grids)

    def backward(self, xs, ys, dys, propagate_down):
        xp = self.xp
        out = []
        for i, (d, pd) in enumerate(zip(dys, propagate_down)):
            if not pd:
                out.append(None)
                continue
            if d is None:
                out.append(xp.zeros(self.in_shapes[i], dtype=np.float32))
                continue
            others = tuple(a for a in range(d.ndim) if a != self.axis_of[i])
            out.append(d.sum(axis=others))
        return out


def _mT(a):
    return a.swapaxes(-1, -2)


class BatchDet(Kernel):
    def forward(self, xs):
        return (self.xp.linalg.det(xs[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        inv_t = _mT(self.xp.linalg.inv(xs[0]))
        return [(dys[0] * ys[0])[:, None, None] * inv_t]


class BatchInv(Kernel):
    def forward(self, xs):
        return (self.xp.linalg.inv(xs[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        y_t = _mT(ys[0])
        return [-(y_t @ dys[0] @ y_t)]


class BatchLogdet(Kernel):
    """log|det x|, as nnabla computes it (det, abs, log)."""

    def forward(self, xs):
        return (self.xp.linalg.slogdet(xs[0])[1].astype(xs[0].dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0][:, None, None] * _mT(self.xp.linalg.inv(xs[0]))]


class Gather(Kernel):
    """y = x[batch..., pre..., Indices[batch..., i...], post...] for each batch index."""

    def setup(self):
        x, idx = self.in_shapes
        ax, b = self.axis % len(x), self.batch_dims
        self.view = (math.prod(x[:b]), math.prod(x[b:ax]), x[ax], math.prod(x[ax + 1:]))
        self.idx_view = (self.view[0], math.prod(idx[b:]))

    def _index(self, indices):
        xp = self.xp
        _check_range(self, "Indices", indices, 0, self.view[2])
        batch = xp.arange(self.view[0])[:, None, None]
        pre = xp.arange(self.view[1])[None, :, None]
        return batch, pre, indices.reshape(self.idx_view)[:, None, :]

    def forward(self, xs):
        y = xs[0].reshape(self.view)[self._index(xs[1])]
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        g = self.xp.zeros(self.view, dtype=dys[0].dtype)
        dy = dys[0].reshape(self.view[:2] + (self.idx_view[1], self.view[3]))
        self.xp.add.at(g, self._index(xs[1]), dy)
        return [g.reshape(self.in_shapes[0]), None]


def _nd_index(kernel, name, indices, shape):
    """The index tuple of gather_nd/scatter_nd; negative indices count from the end."""
    m = indices.shape[0]
    for k in range(m):
        _check_range(kernel, name, indices[k], -shape[k], shape[k])
    return tuple(indices[k] for k in range(m))


class GatherNd(Kernel):
    def forward(self, xs):
        return (xs[0][_nd_index(self, "indices", xs[1], self.in_shapes[0])].copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        g = self.xp.zeros(self.in_shapes[0], dtype=dys[0].dtype)
        self.xp.add.at(g, _nd_index(self, "indices", xs[1], self.in_shapes[0]), dys[0])
        return [g, None]


class ScatterNd(Kernel):
    """Writes (add=False: the last duplicate wins) or adds ``data`` at ``indices``.

    With ``out`` given, the result is also written into ``out`` in place (nnabla's
    behaviour); ``out`` receives no gradient.
    """

    def forward(self, xs):
        data, indices, out = xs[0], xs[1], xs[2] if len(xs) > 2 else None
        y = (self.xp.zeros(self.out_shapes[0], dtype=data.dtype) if out is None
             else out.copy())
        index = _nd_index(self, "indices", indices, self.out_shapes[0])
        if self.add:
            self.xp.add.at(y, index, data)
        else:
            y[index] = data
        if out is not None:
            out[...] = y
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = dys[0][_nd_index(self, "indices", xs[1], self.out_shapes[0])]
        return grads


class ScatterAdd(Kernel):
    def setup(self):
        self.ax = self.axis % len(self.in_shapes[0])
        self.region = tuple(slice(0, n) for n in self.in_shapes[1])

    def _index(self, indices):
        _check_range(self, "indices", indices, 0, self.in_shapes[0][self.ax])
        grid = list(self.xp.indices(indices.shape, sparse=True))
        grid[self.ax] = indices
        return tuple(grid)

    def forward(self, xs):
        y = xs[0].copy()
        self.xp.add.at(y, self._index(xs[1]), xs[2][self.region])
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        g1 = None
        if propagate_down[2]:
            g1 = self.xp.zeros(self.in_shapes[2], dtype=dys[0].dtype)
            g1[self.region] = dys[0][self._index(xs[1])]
        return [dys[0] if propagate_down[0] else None, None, g1]


class Shape(Kernel):
    def setup(self):
        ndim = len(self.in_shapes[0])
        a = min(max(self.start + ndim if self.start < 0 else self.start, 0), ndim)
        self.sizes = tuple(self.in_shapes[0][a:a + self.out_shapes[0][0]])

    def forward(self, xs):
        return (self.xp.asarray(self.sizes, dtype=np.float32),)

    def backward(self, xs, ys, dys, propagate_down):
        # a shape does not depend on the values: the gradient is zero
        return [self.xp.zeros(self.in_shapes[0], dtype=np.float32) if propagate_down[0]
                else None]


class Assign(Kernel):
    """Copies src into dst in place; as in nnabla, the output gradient flows to dst."""

    def forward(self, xs):
        xs[0][...] = xs[1]
        return (xs[1].copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0], None]


KERNELS = {cls.__name__: cls for cls in (
    Concatenate, Split, Stack, Slice, Pad, Transpose, Reshape, Broadcast, BroadcastTo, Tile,
    Flip, OneHot, Shift, Sort, MatrixDiag, MatrixDiagPart, Trilu, Meshgrid, BatchDet,
    BatchInv, BatchLogdet, Gather, GatherNd, ScatterNd, ScatterAdd, Shape, Assign)}
