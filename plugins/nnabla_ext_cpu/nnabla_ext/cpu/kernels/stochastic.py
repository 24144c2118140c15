"""Kernels of the stochastic functions, written against ``xp``.

Every kernel draws from ``self.rng`` (see ``rng_for``): the global function
generator for ``seed=-1``, else a generator of its own kept across calls. The
generator state before each forward pass is remembered, so ``recompute(xs)``
repeats that pass's draws exactly (nnabla's recomputation) without advancing
the generator. What the backward pass needs (masks, source positions) is kept
on the kernel by the forward pass.
"""
from __future__ import annotations

import math

from ._base import Kernel, rng_for


class _Stochastic(Kernel):
    """Binds a generator; subclasses implement ``sample(xs, rng) -> outputs``."""

    def setup(self):
        self.rng = rng_for(self.seed)
        self._replay = None

    def sample(self, xs, rng):
        raise NotImplementedError

    def forward(self, xs):
        self._replay = self.rng.get_state()
        return self.sample(xs, self.rng)

    def recompute(self, xs):
        """Repeat the last forward pass's draws; the generator does not advance."""
        if self._replay is None:
            return self.forward(xs)
        rng = type(self.rng)()
        rng.set_state(self._replay)
        return self.sample(xs, rng)

    def floats(self, values):
        return self.xp.asarray(values, dtype=self.xp.float32)


class Dropout(_Stochastic):
    def sample(self, xs, rng):
        x = xs[0]
        # 32-bit integer draws are several times faster than float ones here
        keep_below = round((1.0 - self.p) * 2 ** 32)
        self.mask = self.xp.asarray(rng.randint(0, 2 ** 32, x.shape, dtype="uint64")
                                    < keep_below)
        self.scale = 1.0 / (1.0 - self.p)
        return (self.masked(x),)

    def masked(self, a):
        out = (a * self.scale).astype(a.dtype, copy=False)
        out *= self.mask
        return out

    def backward(self, xs, ys, dys, propagate_down):
        return [self.masked(dys[0]) if propagate_down[0] else None]


class Rand(_Stochastic):
    def sample(self, xs, rng):
        return (self.floats(rng.uniform(self.low, self.high, self.shape)),)


class Randint(_Stochastic):
    def sample(self, xs, rng):
        return (self.xp.asarray(rng.randint(self.low, self.high, self.shape),
                                dtype=self.xp.int32),)


class Randn(_Stochastic):
    def sample(self, xs, rng):
        return (self.floats(rng.normal(self.mu, self.sigma, self.shape)),)


class RandBinomial(_Stochastic):
    def sample(self, xs, rng):
        return (self.floats(rng.binomial(self.n, self.p, self.shape)),)


class RandBeta(_Stochastic):
    def sample(self, xs, rng):
        return (self.floats(rng.beta(self.alpha, self.beta, self.shape)),)


class RandGamma(_Stochastic):
    def sample(self, xs, rng):
        return (self.floats(rng.gamma(self.k, self.theta, self.shape)),)


class RandomChoice(_Stochastic):
    """Rows of the last axis; the drawn positions are kept for the backward pass."""

    def setup(self):
        super().setup()
        shape = self.in_shapes[0]
        self.k = shape[-1] if shape else 1
        self.rows = math.prod(shape[:-1])
        self.draws = math.prod(self.shape) if self.shape else 1

    def sample(self, xs, rng):
        x, w = xs
        xp = self.xp
        w = w.reshape(self.rows, self.k).astype(xp.float64)
        if w.size and bool((w < 0).any()):
            raise self.spec.value_error("w", "non-negative weights", float(w.min()))
        draw = self.with_replacement if self.replace else self.without_replacement
        self.index = draw(xp, w, rng)
        y = xp.take_along_axis(x.reshape(self.rows, self.k), self.index, axis=1)
        return (y.reshape(self.out_shapes[0]),)

    def with_replacement(self, xp, w, rng):
        total = w.sum(axis=1, keepdims=True)
        if w.size and bool((total <= 0).any()):
            raise self.spec.value_error("w", "at least one positive weight in each row", 0.0)
        # Row r's normalised cumulative weights are shifted into [r, r + 1], so one
        # sorted search serves every row.
        row = xp.arange(self.rows)[:, None]
        edges = (xp.cumsum(w, axis=1) / total + row).ravel()
        u = xp.asarray(rng.random_sample((self.rows, self.draws))) + row
        pos = xp.searchsorted(edges, u.ravel(), side="right").reshape(u.shape) - row * self.k
        return xp.clip(pos, 0, self.k - 1)

    def without_replacement(self, xp, w, rng):
        positive = (w > 0).sum(axis=1)
        if w.size and bool((positive < self.draws).any()):
            raise self.spec.value_error(
                "w", f"at least {self.draws} positive weights in each row",
                f"a row with {int(positive.min())}", why="sampling without replacement")
        # Weighted sampling without replacement as top-k of log(u) / w keys
        # (Efraimidis-Spirakis); zero weights get -inf keys and are never drawn.
        u = xp.asarray(rng.random_sample(w.shape))
        with xp.errstate(divide="ignore"):
            keys = xp.where(w > 0, xp.log(u) / xp.where(w > 0, w, 1), -xp.inf)
        return xp.argsort(-keys, axis=1, kind="stable")[:, :self.draws]

    def backward(self, xs, ys, dys, propagate_down):
        xp = self.xp
        flat = (self.index + xp.arange(self.rows)[:, None] * self.k).ravel()
        g = xp.bincount(flat, weights=dys[0].ravel(), minlength=self.rows * self.k)
        g = g.reshape(self.in_shapes[0]).astype(dys[0].dtype)
        return [g if propagate_down[0] else None, g.copy() if propagate_down[1] else None]


def flat_source(xp, in_shape, out_shape, base_axis, per_axis):
    """Flat positions in x of every output element of an index-mapping augmentation.

    ``per_axis[d]`` holds the source indices along axis d: shape ``(out[d],)`` when
    shared by all samples, or ``out[:base_axis] + (out[d],)`` when drawn per sample.
    """
    ndim = len(out_shape)
    flat = xp.zeros(out_shape, dtype=xp.int64)
    stride = 1
    for d in reversed(range(ndim)):
        idx = per_axis[d]
        view = [1] * ndim if idx.ndim == 1 else list(out_shape[:base_axis]) + [1] * (
            ndim - base_axis)
        view[d] = out_shape[d]
        flat += idx.reshape(view) * stride
        stride *= in_shape[d]
    return flat


class _Remap(_Stochastic):
    """Augmentations that read every output element from one position of x."""

    injective = True     # each x element feeds at most one output (crop, flip)

    def batch(self):
        return tuple(self.out_shapes[0][:self.base_axis])

    def remap(self, x, per_axis, valid=None, fill=0.0):
        xp = self.xp
        self.src = flat_source(xp, x.shape, self.out_shapes[0], self.base_axis, per_axis)
        self.valid = None if valid is None else xp.broadcast_to(valid, self.src.shape)
        y = x.reshape(-1)[self.src]
        if valid is None:
            return y
        return xp.where(self.valid, y, fill).astype(x.dtype, copy=False)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        xp = self.xp
        dy = dys[0]
        size = math.prod(self.in_shapes[0])
        if self.injective:
            g = xp.zeros(size, dtype=dy.dtype)
            g[self.src.ravel()] = dy.ravel()
        else:
            src, dy = (self.src, dy) if self.valid is None else (
                self.src[self.valid], dy[self.valid])
            g = xp.bincount(src.ravel(), weights=dy.ravel(), minlength=size).astype(dy.dtype)
        return [g.reshape(self.in_shapes[0])]


class RandomCrop(_Remap):
    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        per_axis = []
        for d, (n_in, n_out) in enumerate(zip(x.shape, self.out_shapes[0])):
            idx = xp.arange(n_out)
            if n_in != n_out:
                size = () if d < self.base_axis else self.batch()
                idx = xp.asarray(rng.randint(0, n_in - n_out + 1, size))[..., None] + idx
            per_axis.append(idx)
        return (self.remap(x, per_axis),)


class RandomFlip(_Remap):
    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        per_axis = []
        for d, n in enumerate(x.shape):
            idx = xp.arange(n)
            if d in self.axes:
                size = () if d < self.base_axis else self.batch()
                flip = xp.asarray(rng.randint(0, 2, size).astype(bool))[..., None]
                idx = xp.where(flip, n - 1 - idx, idx)
            per_axis.append(idx)
        return (self.remap(x, per_axis),)


class RandomShift(_Remap):
    injective = False    # 'nearest' and 'reflect' read border elements repeatedly

    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        first = x.ndim - len(self.shifts)     # shifts apply to the last axes
        per_axis, valid = [], None
        for d, n in enumerate(x.shape):
            reach = self.shifts[d - first] if d >= first else 0
            idx = xp.arange(n)
            if reach:
                size = () if d < self.base_axis else self.batch()
                shift = xp.asarray(rng.randint(-reach, reach + 1, size))[..., None]
                idx, ok = self.border(idx - shift, n)
                if ok is not None:
                    view = self.view_of(idx, d, x.ndim)
                    valid = ok.reshape(view) if valid is None else valid & ok.reshape(view)
            per_axis.append(idx)
        return (self.remap(x, per_axis, valid, self.constant_value),)

    def view_of(self, idx, d, ndim):
        out = self.out_shapes[0]
        view = [1] * ndim if idx.ndim == 1 else list(out[:self.base_axis]) + [1] * (
            ndim - self.base_axis)
        view[d] = out[d]
        return view

    def border(self, src, n):
        """Source indices inside [0, n) by the border mode, and which are real."""
        xp = self.xp
        if self.border_mode == "nearest":
            return xp.clip(src, 0, n - 1), None
        if self.border_mode == "reflect":
            a = xp.abs(src + 2 * n) % (2 * n)    # mirror with the edge repeated
            return xp.where(a >= n, 2 * n - 1 - a, a), None
        ok = (src >= 0) & (src < n)
        return xp.clip(src, 0, n - 1), ok


class RandomErase(_Stochastic):
    """Erases ``n`` random rectangles per sample (per channel unless ``share``)."""

    def setup(self):
        super().setup()
        shape = self.in_shapes[0]
        b = self.base_axis
        self.samples = math.prod(shape[:b])
        if self.channel_last:
            self.h, self.w, self.c = shape[b:]
        else:
            self.c, self.h, self.w = shape[b:]

    def rectangles(self, rng):
        """Per patch: erase flag, first/last row, first/last column (inclusive)."""
        xp = self.xp
        size = (self.n, self.samples) + (() if self.share else (self.c,))
        area = rng.uniform(*self.area_ratios, size) * (self.h * self.w)
        aspect = rng.uniform(*self.aspect_ratios, size)
        he = xp.minimum(xp.floor(xp.sqrt(area * aspect)), self.h).astype(xp.int64)
        we = xp.minimum(xp.floor(xp.sqrt(area / aspect)), self.w).astype(xp.int64)
        erase = rng.random_sample(size) <= self.prob
        top = xp.floor(rng.random_sample(size) * (self.h - he + 1)).astype(xp.int64)
        left = xp.floor(rng.random_sample(size) * (self.w - we + 1)).astype(xp.int64)
        return erase, top, top + he, left, left + we

    def patch_masks(self, rng):
        """Boolean masks (n, samples, C or 1, H, W) of the erased pixels."""
        xp = self.xp
        erase, top, bottom, left, right = (xp.asarray(a) for a in self.rectangles(rng))
        if self.share:
            erase, top, bottom, left, right = (a[..., None] for a in
                                               (erase, top, bottom, left, right))
        rows = xp.arange(self.h)
        cols = xp.arange(self.w)
        in_rows = (rows >= top[..., None]) & (rows <= bottom[..., None])
        in_cols = (cols >= left[..., None]) & (cols <= right[..., None])
        return erase[..., None, None] & in_rows[..., :, None] & in_cols[..., None, :]

    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        y = x.reshape((self.samples,) + x.shape[self.base_axis:]).copy()
        erased = xp.zeros(y.shape, dtype=bool)
        for mask in self.patch_masks(rng):     # later patches overwrite earlier ones
            if self.channel_last:
                mask = xp.moveaxis(mask, 1, -1)
            mask = xp.broadcast_to(mask, y.shape)
            count = int(mask.sum())
            if count:
                y[mask] = rng.uniform(*self.replacements, count)
                erased |= mask
        self.erased = erased.reshape(x.shape)
        return (y.reshape(x.shape),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        dy = dys[0]
        if not self.ste_fine_grained:
            return [dy]
        return [self.xp.where(self.erased, 0, dy).astype(dy.dtype, copy=False)]


KERNELS = {k.__name__: k for k in (
    Dropout, Rand, Randint, Randn, RandBinomial, RandBeta, RandGamma, RandomChoice,
    RandomCrop, RandomFlip, RandomShift, RandomErase)}
