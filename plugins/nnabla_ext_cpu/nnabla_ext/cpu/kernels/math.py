"""Kernels of the math functions, written against ``xp``.

Element-wise functions follow the C library: NaN or Inf outside the domain
(log of a negative number, exp overflow) without a warning, as nnabla does.
"""
from __future__ import annotations

import contextlib
import math

from ._base import Kernel, unbroadcast


def quiet(xp):
    """Silence floating-point warnings: NaN/Inf results are nnabla's documented behaviour."""
    errstate = getattr(xp, "errstate", None)
    return errstate(all="ignore") if errstate else contextlib.nullcontext()


class Unary(Kernel):
    """An element-wise kernel given by ``f(xp, x)`` and ``df(xp, x, y, dy)``."""

    f = None
    df = None

    def forward(self, xs):
        with quiet(self.xp):
            return (type(self).f(self.xp, xs[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        with quiet(self.xp):
            return [type(self).df(self.xp, xs[0], ys[0], dys[0])]


def unary(name, f, df):
    """Make a :class:`Unary` subclass named after the function type."""
    return type(name, (Unary,), {"f": staticmethod(f), "df": staticmethod(df),
                                 "__doc__": f"Element-wise {name}."})


def straight_through(xp, x, y, dy):
    """Gradient of rounding functions in nnabla: dy passes unchanged."""
    return dy


def round_half_away(xp, x):
    """Round half away from zero (C's ``round``), unlike numpy's half-to-even."""
    a = xp.abs(x)
    r = xp.floor(a)
    r += (a - r) >= 0.5          # a - floor(a) is exact, so no double rounding at .5
    return xp.copysign(r, x)


# Numerical Recipes' erfc approximation (fractional error < 1.2e-7) for |x| >= 0.5.
_ERFC_COEFFS = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
                -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# Maclaurin series of erf in powers of x^2, highest first: 2/sqrt(pi) (-1)^n / (n! (2n+1)).
_SERIES_COEFFS = tuple(_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                       for n in reversed(range(8)))


def _horner(xp, coeffs, t):
    out = xp.full_like(t, coeffs[0])
    for c in coeffs[1:]:
        out *= t
        out += c
    return out


def erf(xp, x):
    """Error function; series near 0 (keeps relative accuracy), erfc fit elsewhere.

    In-place updates on fresh buffers keep large temporaries (which dominate the
    run time) few; Horner forms avoid tiny powers of x (slow denormals).
    """
    z = xp.abs(x)
    t = 0.5 * z
    t += 1.0
    xp.reciprocal(t, out=t)
    poly = _horner(xp, _ERFC_COEFFS, t)
    poly -= z * z
    erfc = xp.exp(poly, out=poly)
    erfc *= t
    big = xp.copysign(1.0 - erfc, x)
    # 8 terms suffice for |x| < 0.5; clipping keeps the unused branch finite.
    xc = xp.clip(x, -0.5, 0.5)
    small = _horner(xp, _SERIES_COEFFS, xc * xc)
    small *= xc
    return xp.where(z < 0.5, small, big)


Abs = unary("Abs", lambda xp, x: xp.abs(x), lambda xp, x, y, dy: xp.where(x < 0, -dy, dy))
Exp = unary("Exp", lambda xp, x: xp.exp(x), lambda xp, x, y, dy: dy * y)
Log = unary("Log", lambda xp, x: xp.log(x), lambda xp, x, y, dy: dy / x)
Identity = unary("Identity", lambda xp, x: x.copy(), straight_through)
Round = unary("Round", round_half_away, straight_through)
Ceil = unary("Ceil", lambda xp, x: xp.ceil(x), straight_through)
Floor = unary("Floor", lambda xp, x: xp.floor(x), straight_through)
Sin = unary("Sin", lambda xp, x: xp.sin(x), lambda xp, x, y, dy: dy * xp.cos(x))
Cos = unary("Cos", lambda xp, x: xp.cos(x), lambda xp, x, y, dy: -dy * xp.sin(x))
Tan = unary("Tan", lambda xp, x: xp.tan(x), lambda xp, x, y, dy: dy / xp.square(xp.cos(x)))
Sinh = unary("Sinh", lambda xp, x: xp.sinh(x), lambda xp, x, y, dy: dy * xp.cosh(x))
Cosh = unary("Cosh", lambda xp, x: xp.cosh(x), lambda xp, x, y, dy: dy * xp.sinh(x))
ASin = unary("ASin", lambda xp, x: xp.arcsin(x),
             lambda xp, x, y, dy: dy / xp.sqrt(1 - x * x))
ACos = unary("ACos", lambda xp, x: xp.arccos(x),
             lambda xp, x, y, dy: -dy / xp.sqrt(1 - x * x))
ATan = unary("ATan", lambda xp, x: xp.arctan(x), lambda xp, x, y, dy: dy / (1 + x * x))
ASinh = unary("ASinh", lambda xp, x: xp.arcsinh(x),
              lambda xp, x, y, dy: dy / xp.sqrt(x * x + 1))
ACosh = unary("ACosh", lambda xp, x: xp.arccosh(x),
              lambda xp, x, y, dy: dy / xp.sqrt(x * x - 1))
ATanh = unary("ATanh", lambda xp, x: xp.arctanh(x), lambda xp, x, y, dy: dy / (1 - x * x))
Erf = unary("Erf", erf, lambda xp, x, y, dy: dy * _TWO_OVER_SQRT_PI * xp.exp(-x * x))


class ATan2(Kernel):
    """y = arctan2(x0, x1) with nnabla's same-rank broadcasting."""

    def forward(self, xs):
        return (self.xp.arctan2(xs[0], xs[1]),)

    def backward(self, xs, ys, dys, propagate_down):
        x0, x1, dy = xs[0], xs[1], dys[0]
        with quiet(self.xp):
            scale = dy / (x0 * x0 + x1 * x1)
        s0, s1 = self.in_shapes
        return [unbroadcast(self.xp, scale * x1, s0) if propagate_down[0] else None,
                unbroadcast(self.xp, -scale * x0, s1) if propagate_down[1] else None]


class BatchMatmul(Kernel):
    """Batched matrix product over the last two axes; batch axes broadcast.

    With ``A = op(a)``, ``B = op(b)`` (``op``: the transpose of the last two axes when its
    flag is set) and ``y = A B``, the gradients are products taken straight in the inputs'
    layouts: ``ga = dy B^T``, or ``B dy^T`` when ``a`` is transposed; ``gb = A^T dy``, or
    ``dy^T A`` when ``b`` is transposed; each then summed over the batch axes its input
    broadcast. Every product goes through :meth:`product`, which a backend may override
    (the CPU plugin's oneDNN kernel does).
    """

    def _t(self, m, flag):
        return m.swapaxes(-1, -2) if flag else m

    def product(self, p, q):
        """``p @ q`` over the last two axes of two arrays of one rank (batch axes broadcast)."""
        return self.xp.matmul(p, q)

    def forward(self, xs):
        a, b = xs
        return (self.product(self._t(a, self.transpose_a), self._t(b, self.transpose_b)),)

    def backward(self, xs, ys, dys, propagate_down):
        (a, b), dy = xs, dys[0]
        ta, tb = self.transpose_a, self.transpose_b
        op_a, op_b, dy_t = self._t(a, ta), self._t(b, tb), self._t(dy, True)
        ga = gb = None
        if propagate_down[0]:
            da = self.product(op_b, dy_t) if ta else self.product(dy, self._t(op_b, True))
            ga = unbroadcast(self.xp, da, self.in_shapes[0])
        if propagate_down[1]:
            db = self.product(dy_t, op_a) if tb else self.product(self._t(op_a, True), dy)
            gb = unbroadcast(self.xp, db, self.in_shapes[1])
        return [ga, gb]


def shift(xp, x, axis, fill):
    """Shift ``x`` one step forward along ``axis``: out[0] = fill, out[i] = x[i - 1]."""
    head = xp.full_like(xp.take(x, [0], axis=axis), fill)
    body = xp.take(x, xp.arange(x.shape[axis] - 1), axis=axis)
    return xp.concatenate([head, body], axis=axis)


def unshift(xp, g, axis):
    """Adjoint of :func:`shift`: out[i] = g[i + 1], and 0 for the last element."""
    n = g.shape[axis]
    body = xp.take(g, xp.arange(1, n), axis=axis)
    tail = xp.zeros_like(xp.take(g, [0], axis=axis)) if n else body
    return xp.concatenate([body, tail], axis=axis)


class _Cumulative(Kernel):
    """Shared exclusive/reverse handling: scans run forward and inclusive internally."""

    def _prepare(self, x):
        xp = self.xp
        if self.reverse:
            x = xp.flip(x, axis=self.axis)
        if self.exclusive and x.shape[self.axis]:
            x = shift(xp, x, self.axis, self.identity)
        return x

    def _finish_grad(self, g):
        xp = self.xp
        if self.exclusive and g.shape[self.axis]:
            g = unshift(xp, g, self.axis)
        return xp.flip(g, axis=self.axis) if self.reverse else g

    def _orient(self, a):
        return self.xp.flip(a, axis=self.axis) if self.reverse else a

    def forward(self, xs):
        return (self._orient(self.scan(self._prepare(xs[0]))),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        x = self._prepare(xs[0]) if self.needs_x else None
        y = self._orient(ys[0]) if self.needs_x else None
        return [self._finish_grad(self.scan_grad(x, y, self._orient(dys[0])))]


def reverse_cumsum(xp, a, axis):
    return xp.flip(xp.cumsum(xp.flip(a, axis=axis), axis=axis), axis=axis)


class CumSum(_Cumulative):
    identity = 0
    needs_x = False

    def scan(self, x):
        return self.xp.cumsum(x, axis=self.axis)

    def scan_grad(self, x, y, dy):
        return reverse_cumsum(self.xp, dy, self.axis)


class CumProd(_Cumulative):
    identity = 1
    needs_x = True

    def scan(self, x):
        return self.xp.cumprod(x, axis=self.axis)

    def scan_grad(self, x, y, dy):
        """Gradient of an inclusive cumprod, exact with zeros in x.

        Before the first zero of a scan, dx_i = sum_{j>=i} y_j dy_j / x_i; at the
        first zero, the same sum with that zero replaced by 1 (and no division);
        after it, every product through x_i contains the first zero, so dx_i = 0.
        """
        xp, axis = self.xp, self.axis
        zero = x == 0
        if not zero.any():
            return reverse_cumsum(xp, y * dy, axis) / x
        zeros_so_far = xp.cumsum(zero, axis=axis)
        before = zeros_so_far == 0
        first_zero = zero & (zeros_so_far == 1)
        with quiet(xp):
            g_before = reverse_cumsum(xp, y * dy, axis) / x
        masked = xp.cumprod(xp.where(first_zero, 1, x), axis=axis)
        g_first = reverse_cumsum(xp, masked * dy, axis)
        return xp.where(before, g_before, xp.where(first_zero, g_first, 0)).astype(x.dtype)


KERNELS = {k.__name__: k for k in (
    Abs, Exp, Log, Identity, BatchMatmul, Round, Ceil, Floor, Sin, Cos, Tan, Sinh, Cosh,
    ASin, ACos, ATan, ATan2, ASinh, ACosh, ATanh, Erf, CumSum, CumProd)}
