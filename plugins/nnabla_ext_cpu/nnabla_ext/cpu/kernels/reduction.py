"""Kernels of the reduction functions, written against ``xp``.

``axes`` arrive non-negative (the spec's resolver normalised them). Backward
passes broadcast the output gradient back over the reduced axes through the
``keep_dims`` shape of the output.
"""
from __future__ import annotations

import math

from ._base import Kernel


def kept_shape(shape, axes):
    """``shape`` with every reduced axis set to 1 (the ``keep_dims`` output shape)."""
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def spread(xp, g, x_shape, axes):
    """Broadcast a reduced gradient ``g`` back to ``x_shape`` as a new, writable array."""
    out = xp.empty(x_shape, dtype=g.dtype)
    out[...] = g.reshape(kept_shape(x_shape, axes))
    return out


def inverse(perm):
    """The permutation that undoes the transpose ``perm``."""
    return tuple(sorted(range(len(perm)), key=perm.__getitem__))


class _Reduce(Kernel):
    def setup(self):
        self.axes = tuple(self.axes)
        self.x_shape = tuple(self.in_shapes[0])
        self.count = math.prod(self.x_shape[a] for a in self.axes)
        self.kept = kept_shape(self.x_shape, self.axes)


class Sum(_Reduce):
    def forward(self, xs):
        return (self.xp.asarray(xs[0].sum(axis=self.axes, keepdims=self.keep_dims)),)

    def backward(self, xs, ys, dys, pd):
        return [spread(self.xp, self.xp.asarray(dys[0]), self.x_shape, self.axes)]


class Mean(_Reduce):
    def forward(self, xs):
        # sum / count is what ndarray.mean computes, without its Python-level wrapper
        # (5x slower on a small array)
        total = xs[0].sum(axis=self.axes, keepdims=self.keep_dims)
        return (self.xp.asarray(total / self.count if self.count else total * self.xp.nan),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        g = xp.asarray(dys[0])
        g = g * (1.0 / self.count) if self.count else g
        out = xp.empty(self.x_shape, dtype=g.dtype)     # spread(), with the kept shape known
        out[...] = g.reshape(self.kept)
        return [out]


class _Extreme(_Reduce):
    """Max/Min: values, and the flat position of the extreme inside the reduced block.

    The reduced axes are moved last in ascending order, whatever order ``axes`` lists them
    in, and merged, so one arg-reduction gives both the value and nnabla's index numbering
    (nnabla 1.39 numbers the block the same for ``axes=[2, 0]`` and ``[0, 2]``).
    """

    def setup(self):
        super().setup()
        kept = [i for i in range(len(self.x_shape)) if i not in self.axes]
        self.perm = tuple(kept) + tuple(sorted(self.axes))
        self.out_shape = tuple(self.out_shapes[0])
        self.index = None

    def blocks(self, x):
        xp = self.xp
        if self.perm != tuple(range(x.ndim)):
            x = xp.transpose(x, self.perm)
        return x.reshape(x.shape[:x.ndim - len(self.axes)] + (self.count,))

    def forward(self, xs):
        xp = self.xp
        if self.count == 0:
            raise ValueError(f"{self.spec.api_name}: cannot reduce over empty axes "
                             f"{self.axes} of an input of shape {self.x_shape}")
        b = self.blocks(xs[0])
        idx = self.arg(xp, b)
        self.index = idx
        y = xp.take_along_axis(b, idx[..., None], axis=-1)[..., 0].reshape(self.out_shape)
        index = idx.astype(xp.uint64).reshape(self.out_shape)
        if self.only_index:
            return (index,)
        return (y, index) if self.with_index else (y,)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        dy = xp.asarray(dys[0])
        permuted = tuple(self.x_shape[p] for p in self.perm)
        g = xp.zeros(permuted[:len(permuted) - len(self.axes)] + (self.count,), dtype=dy.dtype)
        xp.put_along_axis(g, self.index[..., None], dy.reshape(self.index.shape)[..., None],
                          axis=-1)
        g = g.reshape(permuted)
        if self.perm != tuple(range(len(permuted))):
            g = xp.ascontiguousarray(xp.transpose(g, inverse(self.perm)))
        return [g]


class Max(_Extreme):
    @staticmethod
    def arg(xp, b):
        return xp.argmax(b, axis=-1)


class Min(_Extreme):
    @staticmethod
    def arg(xp, b):
        return xp.argmin(b, axis=-1)


class Prod(_Reduce):
    def forward(self, xs):
        return (self.xp.asarray(xs[0].prod(axis=self.axes, keepdims=self.keep_dims)),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        x = xs[0]
        shape = kept_shape(self.x_shape, self.axes)
        dy = xp.asarray(dys[0]).reshape(shape)
        if bool(xp.all(x != 0)):
            return [dy * ys[0].reshape(shape) / x]
        return [dy * prod_of_others(xp, x, self.axes)]


def prod_of_others(xp, x, axes):
    """For each element, the product of the other elements of its reduced block.

    Exact with zeros (unlike y / x): exclusive products from both ends.
    """
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = tuple(kept) + tuple(axes)
    t = xp.transpose(x, perm)
    lead = t.shape[:len(kept)]
    b = t.reshape(lead + (-1,))
    ones = xp.ones(lead + (1,), dtype=x.dtype)
    left = xp.cumprod(xp.concatenate([ones, b[..., :-1]], axis=-1), axis=-1)
    right = xp.cumprod(xp.concatenate([ones, b[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (left * right).reshape(t.shape)
    return xp.ascontiguousarray(xp.transpose(others, inverse(perm)))


class Norm(_Reduce):
    def forward(self, xs):
        xp = self.xp
        a = xp.abs(xs[0])
        s = (a * a if self.p == 2 else a ** self.p).sum(axis=self.axes, keepdims=self.keep_dims)
        return (xp.asarray(xp.sqrt(s) if self.p == 2 else s ** (1.0 / self.p)),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        x = xs[0]
        shape = kept_shape(self.x_shape, self.axes)
        y = ys[0].reshape(shape)
        dy = xp.asarray(dys[0]).reshape(shape)
        # d/dx (sum |x|^p)^(1/p) = sign(x) |x|^(p-1) y^(1-p); 0/0 at y = 0 stays nan as in nnabla.
        with xp.errstate(divide="ignore", invalid="ignore"):
            if self.p == 2:
                return [dy * x / y]
            return [dy * xp.sign(x) * xp.abs(x) ** (self.p - 1) * y ** (1 - self.p)]


class ReduceSum(Kernel):
    def forward(self, xs):
        return (self.xp.asarray(xs[0].sum()),)

    def backward(self, xs, ys, dys, pd):
        dy = self.xp.asarray(dys[0])
        return [self.xp.full(self.in_shapes[0], dy, dtype=dy.dtype)]


class ReduceMean(Kernel):
    def forward(self, xs):
        return (self.xp.asarray(xs[0].mean()),)

    def backward(self, xs, ys, dys, pd):
        n = math.prod(self.in_shapes[0])
        dy = self.xp.asarray(dys[0])
        return [self.xp.full(self.in_shapes[0], dy / max(n, 1), dtype=dy.dtype)]


KERNELS = {k.__name__: k for k in (Sum, Mean, Max, Min, Prod, Norm, ReduceSum, ReduceMean)}
