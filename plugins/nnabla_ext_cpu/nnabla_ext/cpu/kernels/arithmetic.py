"""Kernels of the arithmetic functions, written against ``xp``."""
from __future__ import annotations

from ._base import Kernel, unbroadcast


class _Binary(Kernel):
    def grads(self, x0, x1, y, dy):
        raise NotImplementedError

    def backward(self, xs, ys, dys, propagate_down):
        g0, g1 = self.grads(xs[0], xs[1], ys[0], dys[0], propagate_down)
        s0, s1 = self.in_shapes
        return [unbroadcast(self.xp, g0, s0) if propagate_down[0] else None,
                unbroadcast(self.xp, g1, s1) if propagate_down[1] else None]


class Add2(_Binary):
    def forward(self, xs):
        return (xs[0] + xs[1],)

    def grads(self, x0, x1, y, dy, pd):
        return dy, dy


class Sub2(_Binary):
    def forward(self, xs):
        return (xs[0] - xs[1],)

    def grads(self, x0, x1, y, dy, pd):
        return dy, (-dy if pd[1] else None)


class Mul2(_Binary):
    def forward(self, xs):
        return (xs[0] * xs[1],)

    def grads(self, x0, x1, y, dy, pd):
        return (dy * x1 if pd[0] else None), (dy * x0 if pd[1] else None)


class Div2(_Binary):
    def forward(self, xs):
        return (xs[0] / xs[1],)

    def grads(self, x0, x1, y, dy, pd):
        g0 = dy / x1 if pd[0] else None
        g1 = -dy * x0 / (x1 * x1) if pd[1] else None
        return g0, g1


class Pow2(_Binary):
    def forward(self, xs):
        return (self.xp.power(xs[0], xs[1]),)

    def grads(self, x0, x1, y, dy, pd):
        xp = self.xp
        g0 = dy * x1 * xp.power(x0, x1 - 1) if pd[0] else None
        g1 = None
        if pd[1]:
            with xp.errstate(divide="ignore", invalid="ignore"):
                g1 = dy * xp.power(x0, x1) * xp.log(x0)
        return g0, g1


class Maximum2(_Binary):
    def forward(self, xs):
        return (self.xp.maximum(xs[0], xs[1]),)

    def grads(self, x0, x1, y, dy, pd):
        take0 = x0 > x1
        return dy * take0, dy * ~take0


class Minimum2(_Binary):
    def forward(self, xs):
        return (self.xp.minimum(xs[0], xs[1]),)

    def grads(self, x0, x1, y, dy, pd):
        take0 = x0 < x1
        return dy * take0, dy * ~take0


class _Variadic(Kernel):
    def backward(self, xs, ys, dys, propagate_down):
        return [unbroadcast(self.xp, self.grad(i, xs, dys[0]), s) if pd else None
                for i, (s, pd) in enumerate(zip(self.in_shapes, propagate_down))]


class AddN(_Variadic):
    def forward(self, xs):
        y = xs[0] + xs[1] if len(xs) > 1 else xs[0].copy()
        for x in xs[2:]:
            y += x
        return (y,)

    def grad(self, i, xs, dy):
        return dy


class MulN(_Variadic):
    def forward(self, xs):
        y = xs[0] * xs[1] if len(xs) > 1 else xs[0].copy()
        for x in xs[2:]:
            y = y * x
        return (y,)

    def grad(self, i, xs, dy):
        g = dy
        for j, x in enumerate(xs):
            if j != i:
                g = g * x
        return g


class _Scalar(Kernel):
    ufunc = None        # the forward is xp.<ufunc>(x, v) (forward_ufunc), where set

    def setup(self):
        # A 0-d float32 array operand: numpy takes a much faster path than for a Python
        # float, and the float32 result is the same.
        self.v = self.xp.asarray(self.val, dtype=self.xp.float32)
        if self.ufunc is not None:
            self.forward_ufunc = (self.ufunc_function(), self.v)

    def ufunc_function(self):
        """The function of ``forward_ufunc``: ``xp``'s function named ``ufunc``."""
        return getattr(self.xp, self.ufunc)


class AddScalar(_Scalar):
    ufunc = "add"

    def forward(self, xs):
        return (xs[0] + self.v,)

    def backward(self, xs, ys, dys, pd):
        return [dys[0]]


class MulScalar(_Scalar):
    ufunc = "multiply"

    def forward(self, xs):
        return (xs[0] * self.v,)

    def backward(self, xs, ys, dys, pd):
        return [dys[0] * self.v]


class PowScalar(_Scalar):
    def forward(self, xs):
        return (self.xp.power(xs[0], self.val),)

    def backward(self, xs, ys, dys, pd):
        return [dys[0] * self.val * self.xp.power(xs[0], self.val - 1)]


class RSubScalar(_Scalar):
    def forward(self, xs):
        return (self.v - xs[0],)

    def backward(self, xs, ys, dys, pd):
        return [-dys[0]]


class RDivScalar(_Scalar):
    def forward(self, xs):
        return (self.val / xs[0],)

    def backward(self, xs, ys, dys, pd):
        x = xs[0]
        return [-dys[0] * self.val / (x * x)]


class RPowScalar(_Scalar):
    def forward(self, xs):
        return (self.xp.power(self.val, xs[0]),)

    def backward(self, xs, ys, dys, pd):
        return [dys[0] * ys[0] * self.xp.log(self.val)]


class MaximumScalar(_Scalar):
    ufunc = "maximum"

    def forward(self, xs):
        return (self.xp.maximum(xs[0], self.v),)

    def backward(self, xs, ys, dys, pd):
        return [dys[0] * (xs[0] > self.val)]


class MinimumScalar(_Scalar):
    ufunc = "minimum"

    def forward(self, xs):
        return (self.xp.minimum(xs[0], self.v),)

    def backward(self, xs, ys, dys, pd):
        return [dys[0] * (xs[0] < self.val)]


KERNELS = {k.__name__: k for k in (
    Add2, Sub2, Mul2, Div2, Pow2, Maximum2, Minimum2, AddN, MulN, AddScalar, MulScalar,
    PowScalar, RSubScalar, RDivScalar, RPowScalar, MaximumScalar, MinimumScalar)}
