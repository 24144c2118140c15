"""Kernels of the normalization functions, written against ``xp``.

Batch, tensor, layer, instance and group normalization and weight
standardization share one core: statistics over every axis except the ``keep``
axes, then an affine map. Statistics are reduced with ``einsum`` (one pass, no
temporaries, several times faster than ``sum`` over non-contiguous axes); the
backward pass recomputes ``x - mean`` from ``x`` instead of holding a full-size
buffer between passes, and keeps only per-statistic arrays on the kernel.
"""
from __future__ import annotations

import math
import string

from ._base import Kernel, unbroadcast

LETTERS = string.ascii_letters


def stat_shape(shape, keep):
    """``shape`` with every axis not in ``keep`` set to 1."""
    return tuple(s if i in keep else 1 for i, s in enumerate(shape))


def sum_to(xp, a, keep, b=None):
    """Sum ``a`` (or ``a * b``, same shape) over every axis not in ``keep``, keeping dims."""
    s = LETTERS[:a.ndim]
    out = "".join(s[i] for i in sorted(keep))
    r = xp.einsum(f"{s}->{out}", a) if b is None else xp.einsum(f"{s},{s}->{out}", a, b)
    return r.reshape(stat_shape(a.shape, keep))


def moments(xp, x, keep):
    """Mean, biased variance (both with kept dims) and ``x - mean``."""
    n = max(x.size // max(math.prod(x.shape[i] for i in keep), 1), 1)
    m = sum_to(xp, x, keep) / n
    xc = x - m
    return m, sum_to(xp, xc, keep, xc) / n, xc


def standardize_grad_coefficients(scale, inv_std, n, sums, dmean=None, dvar=None):
    """Per-statistic (s, coef, const) with dx = dy s + (x - mean) coef + const, the gradient
    wrt x of ``y = (x - mean(x)) * inv_std(x) * scale`` (see :func:`standardize_grad`);
    ``n`` is the number of elements per statistic, ``sums`` is (sum dy, sum dy (x - mean)).
    """
    s_dy, s_dyxc = sums
    s = inv_std if scale is None else scale * inv_std
    coef = -s * inv_std * inv_std * s_dyxc / n
    const = -s * s_dy / n
    if dvar is not None:
        coef = coef + 2.0 * dvar / n
    if dmean is not None:
        const = const + dmean / n
    return s, coef, const


def standardize_grad(xp, dy, scale, xc, inv_std, keep, dmean=None, dvar=None, sums=None):
    """Gradient wrt x of ``y = (x - mean(x)) * inv_std(x) * scale``, statistics from x.

    ``scale`` is None or has the statistics' shape; ``dmean``/``dvar`` are
    gradients flowing into the batch mean and (biased) variance outputs;
    ``sums`` may pass ``(sum dy, sum dy * xc)`` when the caller has them.
    """
    n = max(xc.size // max(math.prod(xc.shape[i] for i in keep), 1), 1)
    if sums is None:
        sums = sum_to(xp, dy, keep), sum_to(xp, dy, keep, xc)
    s, coef, const = standardize_grad_coefficients(scale, inv_std, n, sums, dmean, dvar)
    dx = dy * s
    xc *= coef      # xc is the caller's scratch copy of x - mean
    dx += xc
    dx += const
    return dx


class _Standardize(Kernel):
    """Normalise ``x`` over every axis but ``keep``, then ``y = x̂ γ + β``.

    Subclasses set ``keep`` (and ``norm_shape`` when normalising a reshaped x,
    as group normalization does). ``beta``/``gamma`` sit at inputs 1 and 2.
    """

    BETA, GAMMA = 1, 2

    def setup(self):
        self.x_shape = tuple(self.in_shapes[0])
        self.norm_shape = getattr(self, "norm_shape", self.x_shape)
        self.keep = tuple(self.keep_axes())
        self.stat = stat_shape(self.norm_shape, self.keep)
        self.output_stat = len(self.out_shapes) == 3
        # Presence from the shapes: backward receives only the data it declared it needs.
        self.has_beta = self.param_shape(self.BETA) is not None
        self.has_gamma = self.param_shape(self.GAMMA) is not None
        # Parameters of the statistics' shape allow the fused per-statistic path.
        self.fast = self.norm_shape == self.x_shape and all(
            self.GAMMA is None or s is None or tuple(s) == self.stat
            for s in (self.param_shape(self.BETA), self.param_shape(self.GAMMA)))

    def param_shape(self, pos):
        if pos is None or pos >= len(self.in_shapes):
            return None
        return self.in_shapes[pos]

    def params(self, xs):
        beta = xs[self.BETA] if self.BETA is not None else None
        gamma = xs[self.GAMMA] if self.GAMMA is not None else None
        return beta, gamma

    def normalize(self, x, beta, gamma, mean, inv_std, xc=None):
        """y from x and statistics; ``xc`` (x - mean, normalised shape) is reused in place."""
        if xc is None:
            xc = x.reshape(self.norm_shape) - mean
        if self.fast:
            xc *= inv_std if gamma is None else gamma * inv_std
            if beta is not None:
                xc += beta
            return xc
        xc *= inv_std
        y = xc.reshape(self.x_shape)
        if gamma is not None:
            y = y * gamma
        return y if beta is None else y + beta

    def fused_forward(self, x, beta, gamma):
        """(y, mean, var) of the fused per-statistic path, or None to take the generic one.
        A hook for backends with a fused loop (nnabla_ext.cpu's native kernels)."""
        return None

    def fused_backward(self, xs, dy, gamma, dmean, dvar, pd):
        """Gradients of the fused per-statistic path, or None to take the generic one."""
        return None

    def forward(self, xs):
        xp = self.xp
        beta, gamma = self.params(xs)
        fused = self.fused_forward(xs[0], beta, gamma) if self.fast else None
        if fused is not None:
            y, mean, var = fused
            self.mean, self.var = mean, var
            return (y, mean, var) if self.output_stat else (y,)
        mean, var, xc = moments(xp, xs[0].reshape(self.norm_shape), self.keep)
        self.mean, self.var = mean, var
        self.inv_std = 1.0 / xp.sqrt(var + self.eps)
        y = self.normalize(xs[0], beta, gamma, mean, self.inv_std, xc)
        return (y, mean, var) if self.output_stat else (y,)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        beta, gamma = self.params(xs)
        dy = dys[0]
        dmean, dvar = (dys[1], dys[2]) if self.output_stat else (None, None)
        if self.fast:
            fused = self.fused_backward(xs, dy, gamma, dmean, dvar, pd)
            if fused is not None:
                return fused
        xc = xs[0].reshape(self.norm_shape) - self.mean
        grads = [None] * len(xs)
        if self.fast:
            sums = sum_to(xp, dy, self.keep), sum_to(xp, dy, self.keep, xc)
            if self.has_beta and pd[self.BETA]:
                grads[self.BETA] = sums[0]
            if self.has_gamma and pd[self.GAMMA]:
                grads[self.GAMMA] = sums[1] * self.inv_std
            if pd[0]:
                grads[0] = standardize_grad(xp, dy, gamma, xc, self.inv_std, self.keep,
                                            dmean, dvar, sums)
            return grads
        if self.has_beta and pd[self.BETA]:
            grads[self.BETA] = unbroadcast(xp, dy, self.in_shapes[self.BETA])
        if self.has_gamma and pd[self.GAMMA]:
            xhat = (xc * self.inv_std).reshape(self.x_shape)
            grads[self.GAMMA] = unbroadcast(xp, dy * xhat, gamma.shape)
        if pd[0]:
            dxh = (dy if gamma is None else dy * gamma).reshape(self.norm_shape)
            dx = standardize_grad(xp, dxh, None, xc, self.inv_std, self.keep, dmean, dvar)
            grads[0] = dx.reshape(self.x_shape)
        return grads


class TensorNormalization(_Standardize):
    def keep_axes(self):
        return self.axes


class LayerNormalization(_Standardize):
    def keep_axes(self):
        return self.batch_axis


class InstanceNormalization(_Standardize):
    def keep_axes(self):
        return tuple(self.batch_axis) + (self.channel_axis,)


class GroupNormalization(_Standardize):
    """Statistics per (batch, group): the channel axis is split as (groups, C/groups)."""

    def setup(self):
        x, c = self.in_shapes[0], self.in_shapes[0][self.channel_axis]
        self.norm_shape = (tuple(x[:self.channel_axis]) + (self.num_groups, c // self.num_groups)
                           + tuple(x[self.channel_axis + 1:]))
        super().setup()

    def keep_axes(self):
        return tuple(self.batch_axis) + (self.channel_axis,)


class WeightStandardization(_Standardize):
    BETA = GAMMA = None

    def keep_axes(self):
        return (self.channel_axis,)


class BatchNormalization(_Standardize):
    """Batch statistics (and running-statistics update) or, with ``batch_stat=False``,
    the running statistics as constants.

    Running mean/variance (inputs 3, 4) are updated in place: the variance with
    the unbiased n/(n-1) estimate, while x is normalised with the biased one.
    """

    MEAN, VARIANCE = 3, 4

    def keep_axes(self):
        return self.axes

    def update_running(self, xs, mean, var):
        rm, rv = xs[self.MEAN], xs[self.VARIANCE]
        n = math.prod(self.x_shape) // max(math.prod(self.stat), 1)
        d = self.decay_rate
        if rm is not None:
            rm *= d
            rm += (1 - d) * mean
        if rv is not None:
            rv *= d
            # n == 1 has no unbiased estimate; nnabla would store nan there.
            rv += (1 - d) * var * (n / max(n - 1, 1))

    def forward(self, xs):
        if self.batch_stat:
            out = super().forward(xs)
            self.update_running(xs, self.mean, self.var)
            return out
        beta, gamma = self.params(xs)
        self.mean = xs[self.MEAN]
        self.inv_std = 1.0 / self.xp.sqrt(xs[self.VARIANCE] + self.eps)
        return (self.normalize(xs[0], beta, gamma, self.mean, self.inv_std),)

    def backward(self, xs, ys, dys, pd):
        if self.batch_stat:
            return super().backward(xs, ys, dys, pd)
        # Running statistics are constants: y is affine in x.
        xp = self.xp
        beta, gamma = self.params(xs)
        dy = dys[0]
        self.inv_std = 1.0 / xp.sqrt(xs[self.VARIANCE] + self.eps)
        grads = [None] * len(xs)
        if self.has_beta and pd[self.BETA]:
            grads[self.BETA] = sum_to(xp, dy, self.keep)
        if self.has_gamma and pd[self.GAMMA]:
            grads[self.GAMMA] = sum_to(xp, dy, self.keep, xs[0] - xs[self.MEAN]) * self.inv_std
        if pd[0]:
            grads[0] = dy * (self.inv_std if gamma is None else gamma * self.inv_std)
        # y = (x - mean) (variance + eps)^(-1/2) γ + β: the statistics are inputs too
        dxh = dy if gamma is None else dy * gamma
        if self.MEAN < len(pd) and pd[self.MEAN] and xs[self.MEAN] is not None:
            grads[self.MEAN] = -sum_to(xp, dxh, self.keep) * self.inv_std
        if self.VARIANCE < len(pd) and pd[self.VARIANCE] and xs[self.VARIANCE] is not None:
            centered = xs[0] - xs[self.MEAN]
            grads[self.VARIANCE] = (sum_to(xp, dxh, self.keep, centered)
                                    * (-0.5 * self.inv_std ** 3))
        return grads


class FusedBatchNormalization(BatchNormalization):
    """relu(batch_normalization(x) + z); z (input 5) is optional."""

    Z = 5

    def forward(self, xs):
        out = super().forward(xs[:5])
        y = out[0]
        if len(xs) > self.Z and xs[self.Z] is not None:
            y += xs[self.Z]
        self.xp.maximum(y, 0, out=y)
        return out

    def backward(self, xs, ys, dys, pd):
        dy = dys[0] * (ys[0] > 0)
        grads = super().backward(xs[:5], ys, [dy, *dys[1:]], pd[:5])
        if len(self.in_shapes) > self.Z and self.in_shapes[self.Z] is not None:
            grads.append(dy if pd[self.Z] else None)
        return grads


class NormNormalization(Kernel):
    """y = x / N with N = (sum_{axes} |x|^p + eps)^(1/p)."""

    def setup(self):
        self.keep = tuple(i for i in range(len(self.in_shapes[0])) if i not in self.axes)

    def forward(self, xs):
        xp = self.xp
        x = xs[0]
        a = xp.abs(x)
        s = sum_to(xp, a, self.keep, a) if self.p == 2 else sum_to(xp, a ** self.p, self.keep)
        self.norm = (s + self.eps) ** (1.0 / self.p)
        return (x / self.norm,)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        x, dy, n = xs[0], dys[0], self.norm
        # dN/dx = sign(x) |x|^(p-1) N^(1-p)
        dn = x if self.p == 2 else xp.sign(x) * xp.abs(x) ** (self.p - 1)
        return [dy / n - dn * (sum_to(xp, dy, self.keep, x) * n ** (-1.0 - self.p))]


class MeanSubtraction(Kernel):
    """y = x - running mean; training updates the running mean and count ``t`` in place.

    The backward pass is nnabla's: dx = dy (1 - 1 / (t n)), not the exact gradient.
    """

    def setup(self):
        self.batch = math.prod(self.in_shapes[0][:self.base_axis])

    def forward(self, xs):
        x, rm, t = xs
        if self.update_running_mean:
            m = x.reshape((self.batch,) + rm.shape).mean(axis=0)
            rm += (m - rm) * (1.0 / (float(t.reshape(-1)[0]) + 1))
            t += 1
        return (x - rm,)

    def backward(self, xs, ys, dys, pd):
        if not self.update_running_mean:
            return [dys[0], None, None]
        factor = 1.0 / (float(xs[2].reshape(-1)[0]) * self.batch)
        return [dys[0] * (1 - factor), None, None]


class ClipGradByValue(Kernel):
    def forward(self, xs):
        return (xs[0].copy(),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        lo, hi = xs[1], xs[2]
        # nnabla's order: above max gives max, else below min gives min (this differs from
        # clip() where min > max: dy below both gives min here)
        dy = dys[0]
        g = [xp.where(dy > hi, hi, xp.where(dy < lo, lo, dy)) if pd[0] else None]
        # min and max get zero gradients, as in nnabla.
        return g + [xp.zeros(s, dtype=dys[0].dtype) if p else None
                    for s, p in zip(self.in_shapes[1:], pd[1:])]


class ClipGradByNorm(Kernel):
    def forward(self, xs):
        return (xs[0].copy(),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        dy = dys[0]
        keep = tuple(i for i in range(dy.ndim) if i not in self.axes)
        return [dy * (self.clip_norm / xp.sqrt(sum_to(xp, dy, keep, dy)))]


class WeightNormalization(Kernel):
    """w_wn = g w r with r = (sum_{axes != dim} w^2 + eps)^(-1/2)."""

    def setup(self):
        self.shape = stat_shape(self.in_shapes[0], (self.dim,))

    def forward(self, xs):
        xp = self.xp
        w, g = xs
        self.r = 1.0 / xp.sqrt(sum_to(xp, w, (self.dim,), w) + self.eps)
        return (w * (g.reshape(self.shape) * self.r),)

    def backward(self, xs, ys, dys, pd):
        xp = self.xp
        w, g = xs
        dy, r = dys[0], self.r
        s = sum_to(xp, dy, (self.dim,), w)
        gb = g.reshape(self.shape)
        dw = (dy * (gb * r) - w * (gb * r ** 3 * s)) if pd[0] else None
        dg = (s * r).reshape(g.shape) if pd[1] else None
        return [dw, dg]


KERNELS = {k.__name__: k for k in (
    BatchNormalization, FusedBatchNormalization, TensorNormalization, LayerNormalization,
    InstanceNormalization, GroupNormalization, WeightStandardization, NormNormalization,
    MeanSubtraction, ClipGradByValue, ClipGradByNorm, WeightNormalization)}
