"""Kernels of the logical functions, written against ``xp``.

Results of comparisons and boolean operations are 0/1 in the input's float
type, as nnabla returns them. Non-zero (including NaN) counts as true.
Scalars are compared after rounding them to the input's type, as nnabla does.
"""
from __future__ import annotations

from ._base import Kernel


def _as_float(mask, like):
    return mask.astype(like.dtype)


class _Binary(Kernel):
    """A non-differentiable comparison ``op(xp, x0, x1) -> bool array``."""

    op = None

    def forward(self, xs):
        x0, x1 = xs
        return (_as_float(type(self).op(self.xp, x0, x1), x0),)


class _Scalar(Kernel):
    """A non-differentiable comparison of x0 with the scalar ``val``."""

    op = None

    def forward(self, xs):
        x = xs[0]
        val = self.val if isinstance(self.val, bool) else self.xp.asarray(self.val, x.dtype)
        return (_as_float(type(self).op(self.xp, x, val), x),)


class _Unary(Kernel):
    op = None

    def forward(self, xs):
        return (_as_float(type(self).op(self.xp, xs[0]), xs[0]),)


def _make(base, name, op):
    return type(name, (base,), {"op": staticmethod(op), "__doc__": f"{name} (0/1 output)."})


_BINARY_OPS = {
    "LogicalAnd": lambda xp, a, b: (a != 0) & (b != 0),
    "LogicalOr": lambda xp, a, b: (a != 0) | (b != 0),
    "LogicalXor": lambda xp, a, b: (a != 0) ^ (b != 0),
    "Equal": lambda xp, a, b: a == b,
    "NotEqual": lambda xp, a, b: a != b,
    "GreaterEqual": lambda xp, a, b: a >= b,
    "Greater": lambda xp, a, b: a > b,
    "LessEqual": lambda xp, a, b: a <= b,
    "Less": lambda xp, a, b: a < b,
}
_SCALAR_OPS = {f"{name}Scalar": op for name, op in _BINARY_OPS.items()}
_UNARY_OPS = {
    "LogicalNot": lambda xp, x: x == 0,
    "IsNaN": lambda xp, x: xp.isnan(x),
    "IsInf": lambda xp, x: xp.isinf(x),
}


class Sign(Kernel):
    """1, -1, or ``alpha`` at zero; the backward pass is straight-through (as nnabla)."""

    def forward(self, xs):
        xp, x = self.xp, xs[0]
        # Written with comparisons (not xp.sign) so that NaN also gives alpha, as in nnabla.
        one = xp.ones((), x.dtype)
        return (xp.where(x > 0, one, xp.where(x < 0, -one, xp.asarray(self.alpha, x.dtype))),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0] if propagate_down[0] else None]


class _Reset(Kernel):
    """Replace the elements ``bad(x)`` by ``val``; they get zero gradient."""

    def forward(self, xs):
        x = xs[0]
        return (self.xp.where(self.bad(x), self.xp.asarray(self.val, x.dtype), x),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        dy = dys[0]
        return [self.xp.where(self.bad(xs[0]), self.xp.zeros((), dy.dtype), dy)]


class ResetNaN(_Reset):
    def bad(self, x):
        return self.xp.isnan(x)


class ResetInf(_Reset):
    def bad(self, x):
        return self.xp.isinf(x)


class Where(Kernel):
    """y = x_true where condition != 0 else x_false; condition covers x's leading axes."""

    def setup(self):
        cond_shape, x_shape, _ = self.in_shapes
        self.cond_view = tuple(cond_shape) + (1,) * (len(x_shape) - len(cond_shape))

    def _mask(self, condition):
        return (condition != 0).reshape(self.cond_view)

    def forward(self, xs):
        condition, x_true, x_false = xs
        return (self.xp.where(self._mask(condition), x_true, x_false),)

    def backward(self, xs, ys, dys, propagate_down):
        mask, dy = self._mask(xs[0]), dys[0]
        zero = self.xp.zeros((), dy.dtype)
        return [None,
                self.xp.where(mask, dy, zero) if propagate_down[1] else None,
                self.xp.where(mask, zero, dy) if propagate_down[2] else None]


class SearchSorted(Kernel):
    """Insertion positions of each row of ``values`` in the same row of ``sorted_sequence``.

    Counts, per value, the sequence elements below it (``<``, or ``<=`` for
    ``right``): equal to a binary search on sorted rows, and vectorised.
    Memory is rows * len(sequence) * len(values) booleans.
    """

    def forward(self, xs):
        seq, values = xs
        below = (seq[..., None, :] <= values[..., :, None]) if self.right else \
            (seq[..., None, :] < values[..., :, None])
        return (below.sum(axis=-1).astype(values.dtype),)


KERNELS = {
    **{name: _make(_Binary, name, op) for name, op in _BINARY_OPS.items()},
    **{name: _make(_Scalar, name, op) for name, op in _SCALAR_OPS.items()},
    **{name: _make(_Unary, name, op) for name, op in _UNARY_OPS.items()},
    **{k.__name__: k for k in (Sign, ResetNaN, ResetInf, Where, SearchSorted)},
}
