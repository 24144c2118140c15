"""Kernels of the loss functions, written against ``xp``."""
from __future__ import annotations

from ._base import Kernel, unbroadcast


def check_labels(kernel, labels, n_classes, allow_negative=True):
    """Raise a ValueError naming the function if a label is >= ``n_classes``.

    Negative labels are ignored by the cross-entropies (nnabla's meaning), so
    only the upper bound is checked unless ``allow_negative`` is False.
    """
    if labels.size == 0:
        return
    xp = kernel.xp
    high = int(xp.max(labels))
    low = int(xp.min(labels))
    if high >= n_classes or (not allow_negative and low < 0):
        bad = high if high >= n_classes else low
        expected = f"labels in [0, {n_classes})"
        if allow_negative:
            expected += " or negative (ignored)"
        raise kernel.spec.value_error(
            "target", expected, bad, why=f"x has {n_classes} classes along axis {kernel.axis}")


def log_softmax(xp, x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)   # max-shift: no overflow in exp
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


class _LabelLoss(Kernel):
    """Shared label handling: labels are clipped to valid positions for gathering."""

    def labels(self, x, t):
        check_labels(self, t, x.shape[self.axis])
        ignored = t < 0
        return self.xp.where(ignored, 0, t), ignored

    def one_hot(self, x, t):
        """(mask of each label's class along the axis, mask of ignored labels)."""
        check_labels(self, t, x.shape[self.axis])
        shape = [1] * x.ndim
        shape[self.axis] = x.shape[self.axis]
        return self.xp.arange(x.shape[self.axis]).reshape(shape) == t, t < 0


class SoftmaxCrossEntropy(_LabelLoss):
    # One-hot masks instead of take/put_along_axis: several times faster at small sizes,
    # and exact (a where-selected sum of one entry; a subtraction of exact zeros elsewhere).
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        hot, ignored = self.one_hot(x, t)
        picked = xp.where(hot, log_softmax(xp, x, self.axis), 0).sum(axis=self.axis,
                                                                     keepdims=True)
        return (xp.where(ignored, 0, -picked).astype(x.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        x, t = xs
        xp = self.xp
        hot, ignored = self.one_hot(x, t)
        g = xp.exp(log_softmax(xp, x, self.axis))
        g -= hot
        g *= xp.where(ignored, 0, dys[0])
        return [g, None]


class CategoricalCrossEntropy(_LabelLoss):
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        safe, ignored = self.labels(x, t)
        p = xp.take_along_axis(x, safe, axis=self.axis)
        tiny = xp.finfo(x.dtype).tiny     # log of a zero probability stays finite
        return (xp.where(ignored, 0, -xp.log(xp.maximum(p, tiny))).astype(x.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        x, t = xs
        xp = self.xp
        safe, ignored = self.labels(x, t)
        p = xp.take_along_axis(x, safe, axis=self.axis)
        gp = xp.where(ignored, 0, -dys[0] / xp.maximum(p, xp.finfo(x.dtype).tiny))
        g = xp.zeros_like(x)
        xp.put_along_axis(g, safe, gp.astype(x.dtype, copy=False), axis=self.axis)
        return [g, None]


class SigmoidCrossEntropy(Kernel):
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        # -(x (t - [x >= 0]) - log(1 + exp(-|x|))): no overflow for large |x|
        y = xp.log1p(xp.exp(-xp.abs(x))) - x * (t.astype(x.dtype) - (x >= 0))
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        x, t = xs
        sig = 0.5 * self.xp.tanh(0.5 * x) + 0.5
        return [dys[0] * (sig - t.astype(x.dtype)), None]


class BinaryCrossEntropy(Kernel):
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        tiny = xp.finfo(x.dtype).tiny
        y = -(t * xp.log(xp.maximum(x, tiny)) + (1 - t) * xp.log(xp.maximum(1 - x, tiny)))
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        x, t = xs
        xp = self.xp
        tiny = xp.finfo(x.dtype).tiny
        dy = dys[0]
        gx = dy * (x - t) / xp.maximum(x - x * x, tiny) if propagate_down[0] else None
        gt = None
        if propagate_down[1]:
            gt = dy * (xp.log(xp.maximum(1 - x, tiny)) - xp.log(xp.maximum(x, tiny)))
        return [gx, gt]


class _Difference(Kernel):
    """Losses of d = x0 - x1 (broadcast): subclasses give f(d) and f'(d)."""

    def value(self, d):
        raise NotImplementedError

    def slope(self, d):
        raise NotImplementedError

    def forward(self, xs):
        return (self.value(xs[0] - xs[1]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not (propagate_down[0] or propagate_down[1]):
            return [None, None]
        g = dys[0] * self.slope(xs[0] - xs[1])
        s0, s1 = self.in_shapes
        return [unbroadcast(self.xp, g, s0) if propagate_down[0] else None,
                unbroadcast(self.xp, -g, s1) if propagate_down[1] else None]


class SquaredError(_Difference):
    def value(self, d):
        return d * d

    def slope(self, d):
        return 2 * d


class AbsoluteError(_Difference):
    def value(self, d):
        return self.xp.abs(d)

    def slope(self, d):
        return self.xp.where(d > 0, 1, -1).astype(d.dtype)   # nnabla: -1 at d == 0


class HuberLoss(_Difference):
    def value(self, d):
        xp = self.xp
        a = xp.abs(d)
        return xp.where(a < self.delta, a * a, self.delta * (2 * a - self.delta)).astype(
            d.dtype, copy=False)

    def slope(self, d):
        xp = self.xp
        clipped = xp.where(xp.abs(d) < self.delta, d, xp.sign(d) * self.delta)
        return (2 * clipped).astype(d.dtype, copy=False)


class EpsilonInsensitiveLoss(_Difference):
    def value(self, d):
        return self.xp.maximum(self.xp.abs(d) - self.epsilon, 0).astype(d.dtype, copy=False)

    def slope(self, d):
        return ((d > self.epsilon).astype(d.dtype) - (d < -self.epsilon).astype(d.dtype))


class KLMultinomial(Kernel):
    EPS = 1e-8    # nnabla's offset inside the logs: p = 0 terms contribute 0

    def setup(self):
        ndim = len(self.in_shapes[0])
        self.base_axis = self.base_axis % ndim if ndim else 0   # nnabla accepts negative axes
        self.axes = tuple(range(self.base_axis, ndim))

    def log_ratio(self, p, q):
        xp = self.xp
        return xp.log(p + self.EPS) - xp.log(q + self.EPS)

    def forward(self, xs):
        p, q = xs
        d = (p * self.log_ratio(p, q)).sum(axis=self.axes)
        return (d.reshape(self.out_shapes[0]).astype(p.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        p, q = xs
        dy = dys[0].reshape(dys[0].shape + (1,) * (p.ndim - self.base_axis - 1))
        gp = dy * (self.log_ratio(p, q) + 1) if propagate_down[0] else None
        gq = -dy * p / q if propagate_down[1] else None
        return [gp, gq]


KERNELS = {k.__name__: k for k in (
    SoftmaxCrossEntropy, CategoricalCrossEntropy, SigmoidCrossEntropy, BinaryCrossEntropy,
    SquaredError, AbsoluteError, HuberLoss, EpsilonInsensitiveLoss, KLMultinomial)}
