"""Kernels of the quantization layers, written against ``xp``.

The backward rules are nnabla's straight-through estimators, not derivatives of the
forward. Layers built on affine/convolution delegate the matrix work to the kernels of
:mod:`.neural_network`, run on the quantised weight; the gradient of that weight is given
to ``weight`` itself.
"""
from __future__ import annotations

import math

from ._base import Kernel, rng_for, unbroadcast
from .neural_network import Affine, Convolution


def round_half_away(xp, x):
    """Round to nearest, ties away from zero (C's ``round``)."""
    return xp.sign(x) * xp.floor(xp.abs(x) + 0.5)


# ------------------------------------------------------------- activations
class BinarySigmoid(Kernel):
    def forward(self, xs):
        return ((xs[0] > 0).astype(xs[0].dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0] * (0.5 * (self.xp.abs(xs[0]) < 1))]


class BinaryTanh(Kernel):
    def forward(self, xs):
        return (self.xp.where(xs[0] > 0, 1, -1).astype(xs[0].dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0] * (self.xp.abs(xs[0]) < 1)]


# ------------------------------------------------- layers on quantised weights
class _QuantizedWeightLayer(Kernel):
    """Runs an inner affine/convolution on a quantised weight made by ``quantize``.

    ``x`` and ``weight`` are inputs 0 and 1; ``bias_slot`` is the position of the bias.
    """

    inner_class = Affine
    bias_slot = 3

    def setup(self):
        shapes = self.in_shapes
        bias = shapes[self.bias_slot] if len(shapes) > self.bias_slot else None
        inner_shapes = [shapes[0], shapes[1]] + ([bias] if bias is not None else [])
        args = {"base_axis": self.base_axis}
        if self.inner_class is Convolution:
            args.update(pad=self.pad, stride=self.stride, dilation=self.dilation,
                        group=self.group, channel_last=False)
        self.inner = self.inner_class(self.spec, args, inner_shapes, self.out_shapes)
        self.has_bias = bias is not None

    def quantize(self, xs):
        raise NotImplementedError

    def _inner_inputs(self, xs, w):
        bias = xs[self.bias_slot] if self.has_bias else None
        return [xs[0], w] + ([bias] if self.has_bias else [])

    def forward(self, xs):
        self.wq = self.quantize(xs)
        return self.inner.forward(self._inner_inputs(xs, self.wq))

    def backward(self, xs, ys, dys, propagate_down):
        pd = [propagate_down[0], propagate_down[1]]
        pd += [propagate_down[self.bias_slot]] if self.has_bias else []
        inner = self.inner.backward([xs[0], self.wq] + [None] * self.has_bias, ys, dys, pd)
        grads = [None] * len(xs)
        grads[0], grads[1] = inner[0], inner[1]
        if self.has_bias:
            grads[self.bias_slot] = inner[2]
        return grads


def binarize(xp, w, zero_to):
    return xp.where(w > 0, 1.0, xp.where(w < 0, -1.0, zero_to)).astype(w.dtype)


class BinaryConnectAffine(_QuantizedWeightLayer):
    def quantize(self, xs):
        wb = binarize(self.xp, xs[1], self.quantize_zero_to)
        xs[2][...] = wb                 # nnabla keeps the binary weight in its input
        return wb


class BinaryConnectConvolution(BinaryConnectAffine):
    inner_class = Convolution


class BinaryWeightAffine(_QuantizedWeightLayer):
    """sign(w) * alpha with alpha = mean |w| per output (columns of the (K, L) weight)."""

    bias_slot = 4

    def quantize(self, xs):
        w2 = xs[1].reshape(xs[1].shape[0], -1)
        alpha = self.xp.abs(w2).mean(axis=0)
        signs = binarize(self.xp, w2, self.quantize_zero_to)
        return self.store(xs, signs, alpha, signs * alpha)

    def store(self, xs, signs, alpha, wq):
        # nnabla keeps the signs in binary_weight and the scales in alpha.
        xs[2][...] = signs.reshape(xs[2].shape)
        xs[3][...] = alpha.reshape(xs[3].shape)
        return wq.reshape(xs[1].shape)


class BinaryWeightConvolution(BinaryWeightAffine):
    """sign(w) * alpha with alpha = mean |w| per output map (rows of the weight)."""

    inner_class = Convolution

    def quantize(self, xs):
        w = xs[1]
        w2 = w.reshape(w.shape[0], -1)
        alpha = self.xp.abs(w2).mean(axis=1)
        signs = binarize(self.xp, w2, self.quantize_zero_to)
        return self.store(xs, signs, alpha, signs * alpha[:, None])


# --------------------------------------------------------------------- INQ
def inq_power_of_two(xp, w, fixed, num_bits):
    """Fixed weights rounded to signed powers of two in [2^n2, 2^n1]; small ones to 0.

    The exponent rounds up when the mantissa is at least 1.5 (arithmetic mean of the
    neighbouring powers); n1 comes from the largest |w|, n2 = n1 + 1 - 2^(num_bits-2).
    """
    max_abs = float(xp.abs(w).max()) if w.size else 0.0
    max_abs = max_abs or 1.0
    lg = math.log2(max_abs)
    n1 = math.floor(lg) + (lg - math.floor(lg) >= math.log2(1.5))
    n2 = n1 + 1 - 2 ** (num_bits - 2)
    a = xp.abs(w)
    with xp.errstate(divide="ignore", invalid="ignore"):     # zeros are pruned below
        b = xp.log2(a)
        e = xp.clip(xp.floor(b) + (b - xp.floor(b) >= math.log2(1.5)), n2, n1)
    q = xp.where(w < 0, -1.0, 1.0) * xp.exp2(e)
    q = xp.where(a < 2.0 ** (n2 - 1), 0.0, q)
    return xp.where(fixed == 1, q, w).astype(w.dtype)


class INQAffine(_QuantizedWeightLayer):
    """Keeps nnabla's state: an iteration counter and the last fixed weights/indicators."""

    def setup(self):
        super().setup()
        self.counter = 0
        self.old_weight = None
        self.old_indicator = None

    def _fix_more(self, w, ind):
        if self.counter not in self.inq_iterations:
            return
        if self.counter == self.inq_iterations[-1]:
            ind[...] = 1
        elif self.selection_algorithm == "largest_abs":
            flat = ind.reshape(-1)
            learnable = self.xp.flatnonzero(flat == 0)
            order = learnable[self.xp.argsort(-self.xp.abs(w.reshape(-1)[learnable]),
                                              kind="stable")]
            flat[order[:max(1, learnable.size // 2)] if learnable.size else order] = 1
        else:
            draw = rng_for(self.seed).random_sample(ind.shape) < 0.5
            ind[...] = self.xp.where(ind == 0, draw, ind)

    def quantize(self, xs):
        w, ind = xs[1], xs[2]
        if self.old_indicator is not None:     # fixed weights never move
            w[...] = self.xp.where(self.old_indicator == 1, self.old_weight, w)
        self._fix_more(w, ind)
        w[...] = inq_power_of_two(self.xp, w, ind, self.num_bits)
        self.counter += 1
        self.old_weight, self.old_indicator = w.copy(), ind.copy()
        return w.copy()

    def recompute(self, xs):
        """Replay the last forward (cleared-buffer recomputation) without a new INQ step."""
        return self.inner.forward(self._inner_inputs(xs, self.wq))


class INQConvolution(INQAffine):
    inner_class = Convolution


# --------------------------------------------------------- element quantizers
class FixedPointQuantize(Kernel):
    def setup(self):
        if self.sign:
            self.hi = ((1 << (self.n - 1)) - 1.0) * self.delta
            self.lo = -self.hi
        else:
            self.hi, self.lo = ((1 << self.n) - 1.0) * self.delta, 0.0

    def forward(self, xs):
        x, xp = xs[0], self.xp
        q = xp.sign(x) * xp.floor(xp.abs(x) / self.delta + 0.5) * self.delta
        return (xp.clip(q, self.lo, self.hi).astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        if not self.ste_fine_grained:
            return [dys[0]]
        x = xs[0]
        return [dys[0] * ((x >= self.lo) & (x <= self.hi))]


class Pow2Quantize(Kernel):
    def setup(self):
        bits = self.n - int(self.sign) - int(self.with_zero)
        self.p_max = 2.0 ** self.m
        self.p_min = 2.0 ** (self.m - ((1 << bits) - 1))
        self.prune_below = self.p_min * 2.0 ** -0.5

    def _power(self, x):
        with self.xp.errstate(divide="ignore"):
            return self.xp.exp2(round_half_away(self.xp, self.xp.log2(self.xp.abs(x))))

    def forward(self, xs):
        x, xp = xs[0], self.xp
        q = self._power(x)
        small = q < self.p_min
        if self.with_zero:
            low = xp.where(xp.abs(x) < self.prune_below, 0.0, self.p_min)
        else:
            low = self.p_min
        q = xp.where(q > self.p_max, self.p_max, xp.where(small, low, q))
        negative = x < 0
        if self.sign:
            q = xp.where(negative, -q, q)
        else:
            q = xp.where(negative, 0.0 if self.with_zero else self.p_min, q)
        return (q.astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        if not self.ste_fine_grained:
            return [dys[0]]
        x = xs[0]
        keep = self._power(x) <= self.p_max
        if not self.sign:
            keep &= x >= 0
        return [dys[0] * keep]


class Prune(Kernel):
    def forward(self, xs):
        x, xp = xs[0], self.xp
        a = xp.abs(x).reshape(-1)
        if a.size == 0:
            return (x.copy(),)
        k = int((a.size - 1) * self.rate)
        thresh = xp.partition(a, k)[k] + (1.0 if self.rate == 1.0 else 0.0)
        return (xp.where(xp.abs(x) < thresh, 0.0, x).astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        return [dys[0]]


def _round(xp, x, mode):
    return round_half_away(xp, x) if mode == "HALF_AWAY_FROM_ZERO" else xp.rint(x)


class QuantizeLinear(Kernel):
    def setup(self):
        self.range = {1: (-128, 127), 2: (0, 255)}[self.dtype]
        self.lo, self.hi = self.range[0] + int(self.narrow_range), self.range[1]

    def forward(self, xs):
        x, scale, zero_point = xs
        xp = self.xp
        # nnabla rounds the zero point half away from zero whatever the round mode.
        zp = xp.clip(round_half_away(xp, zero_point), *self.range)
        zero_point[...] = zp          # nnabla stores the rounded, saturated zero point
        y = _round(xp, x / scale, self.round_mode) + zp
        return (xp.clip(y, self.lo, self.hi).astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        dx = dys[0] / xs[1] if propagate_down[0] else None
        return [dx, None, None]


class DequantizeLinear(Kernel):
    def forward(self, xs):
        x, scale, zero_point = xs
        return (((x - zero_point) * scale).astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        dx = dys[0] * xs[1] if propagate_down[0] else None
        return [dx, None, None]


# ------------------------------------------------------------ min-max quantize
class MinMaxQuantize(Kernel):
    """Forward updates qr_min/qr_max in place and keeps the nudged range for backward."""

    def setup(self):
        self.axes = tuple(i for i, s in enumerate(self.in_shapes[1]) if s == 1)

    def _update_range(self, x, qr_min, qr_max):
        xp = self.xp
        if self.x_min_max:
            x_min = x.min(axis=self.axes, keepdims=True) if x.size else xp.zeros_like(qr_min)
            x_max = x.max(axis=self.axes, keepdims=True) if x.size else xp.zeros_like(qr_max)
            if self.ema:
                qr_min[...] = self.decay * qr_min + (1.0 - self.decay) * x_min
                qr_max[...] = self.decay * qr_max + (1.0 - self.decay) * x_max
            else:
                qr_min[...] = x_min
                qr_max[...] = x_max
        # The range must be wider than eps.
        qr_max[...] = xp.where(qr_max - qr_min < self.eps, qr_min + self.eps, qr_max)

    def forward(self, xs):
        x, qr_min, qr_max, ql_min, ql_max = xs
        xp = self.xp
        self._update_range(x, qr_min, qr_max)
        scale = (qr_max - qr_min) / (ql_max - ql_min)
        zp = ql_min - qr_min / scale
        zp = xp.where(zp <= ql_min, ql_min, xp.where(zp >= ql_max, ql_max,
                                                      round_half_away(xp, zp)))
        self.lo, self.hi = (ql_min - zp) * scale, (ql_max - zp) * scale
        y = round_half_away(xp, (xp.clip(x, self.lo, self.hi) - self.lo) / scale)
        return ((y * scale + self.lo).astype(x.dtype),)

    def backward(self, xs, ys, dys, propagate_down):
        x, dy = xs[0], dys[0]
        grads = [None] * 5
        if propagate_down[0]:
            grads[0] = dy * ((x >= self.lo) & (x <= self.hi)) if self.ste_fine_grained else dy
        if not (self.x_min_max or self.ema):
            shape = self.in_shapes[1]
            if propagate_down[1]:
                grads[1] = unbroadcast(self.xp, dy * (x < self.lo), shape)
            if propagate_down[2]:
                grads[2] = unbroadcast(self.xp, dy * (x > self.hi), shape)
        return grads


KERNELS = {k.__name__: k for k in (
    BinarySigmoid, BinaryTanh, BinaryConnectAffine, BinaryConnectConvolution,
    BinaryWeightAffine, BinaryWeightConvolution, INQAffine, INQConvolution,
    FixedPointQuantize, Pow2Quantize, Prune, QuantizeLinear, DequantizeLinear, MinMaxQuantize)}
