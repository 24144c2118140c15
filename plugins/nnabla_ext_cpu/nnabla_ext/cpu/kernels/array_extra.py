"""Kernels of top-k selection, einsum, mask-driven selection, packed sequences and Cholesky.

Outputs of ``unique``, ``nonzero``, ``bool_gather`` and the packed-sequence
functions are sized by the data: the kernels return arrays of the right shape and
the engine resizes the outputs (the spec sets ``dynamic_shape``).
"""
from __future__ import annotations

import math

import numpy as np

from ._base import Kernel
from ._einsum import Einsum


def _samples(shape, base_axis):
    """(number of samples, sample size) of x split at ``base_axis``."""
    ba = base_axis % len(shape)
    return math.prod(shape[:ba]), math.prod(shape[ba:])


def top_k_indices(xp, x2, k, by_abs, largest):
    """Positions of the k selected entries of each row of ``x2`` (best first)."""
    key = xp.abs(x2) if by_abs else x2
    n = key.shape[1]
    if k < n:
        # Partition first: only the k winners are sorted (large samples, small k). The
        # largest are partitioned at n - k directly, without negating a full copy.
        if largest:
            part = xp.argpartition(key, n - k, axis=1)[:, n - k:]
            order = xp.argsort(-xp.take_along_axis(key, part, axis=1), axis=1, kind="stable")
        else:
            part = xp.argpartition(key, k - 1, axis=1)[:, :k]
            order = xp.argsort(xp.take_along_axis(key, part, axis=1), axis=1, kind="stable")
        return xp.take_along_axis(part, order, axis=1)
    return xp.argsort(-key if largest else key, axis=1, kind="stable")


class TopKData(Kernel):
    def setup(self):
        self.ns, self.ss = _samples(self.in_shapes[0], self.base_axis)

    def indices(self, x2):
        """Positions of the k selected entries of each row, best first."""
        return top_k_indices(self.xp, x2, self.k, self.abs, self.largest)

    def forward(self, xs):
        xp = self.xp
        x2 = xs[0].reshape(self.ns, self.ss)
        self.index = self.indices(x2)
        values = xp.take_along_axis(x2, self.index, axis=1)
        if self.reduce:
            y = values.reshape(self.out_shapes[0])
        else:
            y = xp.zeros_like(x2)
            xp.put_along_axis(y, self.index, values, axis=1)
            y = y.reshape(self.in_shapes[0])
        if self.with_index:
            return (y, self.index.astype(np.uint64).reshape(self.out_shapes[1]))
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        if not self.reduce:
            return [dys[0]]   # nnabla passes the whole gradient through without reduce
        g = self.xp.zeros((self.ns, self.ss), dtype=dys[0].dtype)
        self.xp.put_along_axis(g, self.index, dys[0].reshape(self.ns, self.k), axis=1)
        return [g.reshape(self.in_shapes[0])]


class TopKGrad(Kernel):
    def setup(self):
        self.ns, self.ss = _samples(self.in_shapes[0], self.base_axis)

    def forward(self, xs):
        return (xs[0].copy(),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        xp = self.xp
        g2 = dys[0].reshape(self.ns, self.ss)
        index = top_k_indices(xp, g2, self.k, self.abs, True)
        g = xp.zeros_like(g2)
        xp.put_along_axis(g, index, xp.take_along_axis(g2, index, axis=1), axis=1)
        return [g.reshape(self.in_shapes[0])]


class Unique(Kernel):
    """np.unique with nnabla's flags; unsorted order is that of first appearance."""

    def forward(self, xs):
        xp, x = self.xp, xs[0]
        axis = None if self.flatten else self.axis % x.ndim
        y, index, inverse, counts = xp.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True, axis=axis)
        inverse = inverse.reshape(-1)
        if not self.sorted:
            order = xp.argsort(index, kind="stable")
            rank = xp.empty_like(order)
            rank[order] = xp.arange(order.size)
            index, counts, inverse = index[order], counts[order], rank[inverse]
            y = xp.take(x.reshape(-1) if axis is None else x, index, axis=axis or 0)
        out = [y]
        for flag, value in ((self.with_index, index), (self.with_inverse, inverse),
                            (self.with_counts, counts)):
            if flag:
                out.append(value.astype(np.int32))
        return tuple(out)


class NonZero(Kernel):
    def forward(self, xs):
        return (self.xp.stack(self.xp.nonzero(xs[0])).astype(np.uint64)
                .reshape(xs[0].ndim, -1),)


class BoolGather(Kernel):
    def forward(self, xs):
        return (xs[0][xs[1] != 0],)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        g = self.xp.zeros(self.in_shapes[0], dtype=dys[0].dtype)
        g[xs[1] != 0] = dys[0]
        return [g, None]


class BoolScatter(Kernel):
    """Rows of input to the non-zero mask positions; with `output`, written in place."""

    def forward(self, xs):
        x, mask = xs[0], xs[1] != 0
        nnz = int(mask.sum())
        if nnz != x.shape[0]:
            raise ValueError(f"F.bool_scatter: argument 'input' has shape {x.shape}; expected "
                             f"({nnz}, ...): one row per non-zero of the mask")
        out = xs[2] if len(xs) > 2 and xs[2] is not None else None
        y = self.xp.zeros(self.out_shapes[0], dtype=x.dtype) if out is None else out
        y[mask] = x
        return (y.copy() if out is not None else y,)

    def backward(self, xs, ys, dys, propagate_down):
        mask = xs[1] != 0
        grads = [None] * len(xs)
        if propagate_down[0]:
            grads[0] = dys[0][mask]
        if len(xs) > 2 and propagate_down[2]:
            g = dys[0].copy()
            g[mask] = 0
            grads[2] = g
        return grads


class BoolFill(Kernel):
    def forward(self, xs):
        return (self.xp.where(xs[1] != 0, self.xp.asarray(self.value, xs[0].dtype), xs[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        return [self.xp.where(xs[1] != 0, 0, dys[0]).astype(dys[0].dtype, copy=False), None]


def _time_major(x, batch_first):
    return x.swapaxes(0, 1) if batch_first else x


def batch_sizes_of(xp, lengths):
    """Batch size at each time step of decreasingly sorted ``lengths``."""
    t = int(lengths.max()) if lengths.size else 0
    return (lengths[None, :] > xp.arange(t)[:, None]).sum(axis=1)


class PackPaddedSequence(Kernel):
    def forward(self, xs):
        xp = self.xp
        lengths = xs[1].astype(np.int64)
        padded = _time_major(xs[0], self.batch_first)
        if lengths.size and int(lengths.max()) > padded.shape[0]:
            raise ValueError(f"F.pack_padded_sequence: argument 'lengths' has a length "
                             f"{int(lengths.max())}; expected at most T = {padded.shape[0]}")
        self.valid = xp.arange(padded.shape[0])[:, None] < lengths[None, :]
        # Time-major boolean selection packs step by step, each step's longest first.
        return (padded[self.valid], batch_sizes_of(xp, lengths).astype(np.int32))

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        shape = self.in_shapes[0]
        g = self.xp.zeros(shape, dtype=dys[0].dtype)
        _time_major(g, self.batch_first)[self.valid] = dys[0]
        return [g, None]


class PadPackedSequence(Kernel):
    def forward(self, xs):
        xp = self.xp
        packed, batch_sizes = xs[0], xs[1].astype(np.int64)
        if int(batch_sizes.sum()) != packed.shape[0]:
            raise ValueError(f"F.pad_packed_sequence: argument 'packed_sequence' has shape "
                             f"{packed.shape}; expected ({int(batch_sizes.sum())}, ...): "
                             "the sum of batch_sizes rows")
        b = int(batch_sizes.max()) if batch_sizes.size else 0
        t = max(batch_sizes.size, self.total_length)
        self.valid = xp.arange(b)[None, :] < batch_sizes[:, None]
        padded = xp.full((t, b) + packed.shape[1:], self.padding_value, dtype=packed.dtype)
        padded[:batch_sizes.size][self.valid] = packed
        lengths = self.valid.sum(axis=0).astype(np.int32)
        return (_time_major(padded, self.batch_first).copy(), lengths)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        g = _time_major(dys[0], self.batch_first)[:self.valid.shape[0]]
        return [g[self.valid], None]


def phi(xp, a):
    """Lower triangle of ``a`` with the diagonal halved."""
    lower = xp.tril(a)
    d = xp.einsum("bii->bi", lower)
    lower[:, xp.arange(a.shape[-1]), xp.arange(a.shape[-1])] = 0.5 * d
    return lower


class BatchCholesky(Kernel):
    """Cholesky factors of the lower triangles; the gradient is the symmetric one."""

    def forward(self, xs):
        y = self.xp.linalg.cholesky(xs[0])
        return (y.transpose(0, 2, 1).copy() if self.upper else y,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        xp = self.xp
        low = ys[0].transpose(0, 2, 1) if self.upper else ys[0]
        dlow = dys[0].transpose(0, 2, 1) if self.upper else dys[0]
        # Murray (2016): A_bar = L^-T Phi(L^T L_bar) L^-1, then symmetrised.
        p = phi(xp, low.transpose(0, 2, 1) @ dlow)
        inv = xp.linalg.inv(low)
        s = inv.transpose(0, 2, 1) @ p @ inv
        return [0.5 * (s + s.transpose(0, 2, 1))]


KERNELS = {cls.__name__: cls for cls in (
    TopKData, TopKGrad, Einsum, Unique, NonZero, BoolGather, BoolScatter, BoolFill,
    PackPaddedSequence, PadPackedSequence, BatchCholesky)}
