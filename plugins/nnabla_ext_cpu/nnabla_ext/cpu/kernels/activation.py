"""Kernels of the activation functions, written against ``xp``.

Formulas are chosen not to overflow for large |x|: the sigmoid through tanh,
softplus as max(x, 0) + log1p(exp(-|x|)), ELU-style branches through ``expm1`` of the
clipped input, softmax after subtracting the maximum.
"""
from __future__ import annotations

import math

from ._base import Kernel
from .math import unary

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_CUBIC = 0.044715


def sigmoid(xp, x):
    return 0.5 * xp.tanh(0.5 * x) + 0.5      # tanh form: no overflow for large |x|


def relu(xp, x):
    return xp.fmax(x, 0)                     # fmax: NaN -> 0, as nnabla's max(0, x)


def softplus(xp, x):
    # log(1 + exp(x)) without overflow; several times faster than xp.logaddexp(0, x).
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def elu_part(xp, x, alpha):
    """x for x >= 0, alpha * (exp(x) - 1) below; exp never sees a positive argument."""
    return xp.where(x >= 0, x, alpha * xp.expm1(xp.minimum(x, 0)))


def elu_part_grad(xp, x, alpha, dy):
    return xp.where(x >= 0, dy, dy * alpha * xp.exp(xp.minimum(x, 0)))


def gelu(xp, x):
    return 0.5 * x * (1 + xp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x)))


def gelu_grad(xp, x, y, dy):
    """dy * (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3c x^2)), t the tanh in gelu."""
    t = xp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x))
    # In place on fresh buffers: fewer large temporaries (they dominate the run time).
    g = 1 - t * t
    g *= x
    g *= SQRT_2_OVER_PI * (1 + 3 * GELU_CUBIC * x * x)
    g += t
    g += 1
    g *= 0.5
    g *= dy
    return g


def mish_grad(xp, x, y, dy):
    t = xp.tanh(softplus(xp, x))
    return dy * (t + x * sigmoid(xp, x) * (1 - t * t))


def sinc(xp, x):
    nonzero = x != 0
    safe = xp.where(nonzero, x, 1)
    return xp.where(nonzero, xp.sin(safe) / safe, 1).astype(x.dtype)


def sinc_grad(xp, x, y, dy):
    nonzero = x != 0
    safe = xp.where(nonzero, x, 1)
    return xp.where(nonzero, dy * (xp.cos(safe) - xp.sin(safe) / safe) / safe, 0).astype(x.dtype)


Sigmoid = unary("Sigmoid", sigmoid, lambda xp, x, y, dy: dy * y * (1 - y))
Tanh = unary("Tanh", lambda xp, x: xp.tanh(x), lambda xp, x, y, dy: dy * (1 - y * y))
Swish = unary("Swish", lambda xp, x: x * sigmoid(xp, x),
              lambda xp, x, y, dy: dy * (y + sigmoid(xp, x) * (1 - y)))
GELU = unary("GELU", gelu, gelu_grad)
Mish = unary("Mish", lambda xp, x: x * xp.tanh(softplus(xp, x)), mish_grad)
ReLU6 = unary("ReLU6", lambda xp, x: xp.clip(x, 0, 6),
              lambda xp, x, y, dy: dy * ((x > 0) & (x < 6)))
HardSigmoid = unary("HardSigmoid", lambda xp, x: xp.clip(0.2 * x + 0.5, 0, 1),
                    lambda xp, x, y, dy: dy * (0.2 * ((x >= -2.5) & (x <= 2.5))))
HardTanh = unary("HardTanh", lambda xp, x: xp.clip(x, -1, 1),
                 lambda xp, x, y, dy: dy * ((x >= -1) & (x <= 1)))
LogSigmoid = unary("LogSigmoid", lambda xp, x: -softplus(xp, -x),
                   lambda xp, x, y, dy: dy * sigmoid(xp, -x))
SoftSign = unary("SoftSign", lambda xp, x: x / (1 + xp.abs(x)),
                 lambda xp, x, y, dy: dy / xp.square(1 + xp.abs(x)))
TanhShrink = unary("TanhShrink", lambda xp, x: x - xp.tanh(x),
                   lambda xp, x, y, dy: dy * xp.square(xp.tanh(x)))
Sinc = unary("Sinc", sinc, sinc_grad)


class ReLU(Kernel):
    """y = max(0, x); the backward pass reads y, so it also works in place."""

    def forward(self, xs):
        return (relu(self.xp, xs[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0] * (ys[0] > 0) if propagate_down[0] else None]


class LeakyReLU(Kernel):
    def forward(self, xs):
        x = xs[0]
        return (self.xp.where(x > 0, x, self.alpha * x),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        # For alpha >= 0, y has x's sign (usable in place); a negative alpha needs x.
        positive = (ys[0] if self.alpha >= 0 else xs[0]) > 0
        return [self.xp.where(positive, dys[0], self.alpha * dys[0])]


class ELU(Kernel):
    def forward(self, xs):
        return (elu_part(self.xp, xs[0], self.alpha),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        return [elu_part_grad(self.xp, xs[0], self.alpha, dys[0])]


class SELU(Kernel):
    def forward(self, xs):
        xp, x = self.xp, xs[0]
        neg = self.alpha * xp.expm1(xp.minimum(x, 0))
        return (self.scale * xp.where(x > 0, x, neg),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        xp, x, dy = self.xp, xs[0], dys[0]
        slope = xp.where(x > 0, self.scale, self.scale * self.alpha * xp.exp(xp.minimum(x, 0)))
        return [dy * slope.astype(x.dtype)]


class SoftPlus(Kernel):
    def forward(self, xs):
        return (softplus(self.xp, self.beta * xs[0]) / self.beta,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        return [dys[0] * sigmoid(self.xp, self.beta * xs[0])]


class Softmax(Kernel):
    def forward(self, xs):
        xp, x = self.xp, xs[0]
        e = xp.exp(x - x.max(axis=self.axis, keepdims=True))
        e /= e.sum(axis=self.axis, keepdims=True)
        return (e,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        y, dy = ys[0], dys[0]
        return [y * (dy - (dy * y).sum(axis=self.axis, keepdims=True))]


class LogSoftmax(Kernel):
    def forward(self, xs):
        xp, x = self.xp, xs[0]
        shifted = x - x.max(axis=self.axis, keepdims=True)
        return (shifted - xp.log(xp.exp(shifted).sum(axis=self.axis, keepdims=True)),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        dy = dys[0]
        return [dy - self.xp.exp(ys[0]) * dy.sum(axis=self.axis, keepdims=True)]


class _Doubled(Kernel):
    """Concatenate f(x) and f(-x) along ``axis`` (CReLU, CELU)."""

    def forward(self, xs):
        x = xs[0]
        return (self.xp.concatenate([self.part(x), self.part(-x)], axis=self.axis),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        x = xs[0]
        dy_pos, dy_neg = self.xp.split(dys[0], 2, axis=self.axis)
        return [self.part_grad(x, dy_pos) - self.part_grad(-x, dy_neg)]


class CReLU(_Doubled):
    def part(self, x):
        return relu(self.xp, x)

    def part_grad(self, x, dy):
        return dy * (x > 0)


class CELU(_Doubled):
    def part(self, x):
        return elu_part(self.xp, x, self.alpha)

    def part_grad(self, x, dy):
        return elu_part_grad(self.xp, x, self.alpha, dy)


class PReLU(Kernel):
    """y = x0 if x0 >= 0 else slope * x0; the slope is shared or per channel."""

    def setup(self):
        x_shape, slope_shape = self.in_shapes
        self.per_channel = math.prod(slope_shape) != 1
        self.slope_view = [1] * len(x_shape)
        if self.per_channel:
            self.slope_view[self.base_axis] = x_shape[self.base_axis]

    def forward(self, xs):
        x, w = xs[0], xs[1].reshape(self.slope_view)
        return (self.xp.where(x >= 0, x, w * x),)

    def backward(self, xs, ys, dys, propagate_down):
        xp, x, dy = self.xp, xs[0], dys[0]
        w = xs[1].reshape(self.slope_view)
        negative = x < 0
        gx = xp.where(negative, w * dy, dy) if propagate_down[0] else None
        gw = None
        if propagate_down[1]:
            contrib = xp.where(negative, dy * x, 0)
            axes = tuple(i for i, s in enumerate(self.slope_view) if s == 1)
            gw = contrib.sum(axis=axes).reshape(self.in_shapes[1]).astype(x.dtype)
        return [gx, gw]


KERNELS = {k.__name__: k for k in (
    Sigmoid, Swish, Tanh, ReLU, LeakyReLU, Softmax, LogSoftmax, ELU, SELU, CReLU, CELU,
    PReLU, GELU, Mish, ReLU6, HardSigmoid, HardTanh, LogSigmoid, SoftPlus, SoftSign,
    TanhShrink, Sinc)}
