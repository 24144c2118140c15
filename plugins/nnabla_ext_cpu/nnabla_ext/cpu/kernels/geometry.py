"""Kernels of AffineGrid, WarpByGrid, WarpByFlow and ImageAugmentation.

Sampling works on images laid out as (batch, pixels, channels): a gather picks whole
channel rows at flat pixel indices, its adjoint adds rows back (``np.add.at`` on rows).
"""
from __future__ import annotations

import itertools

import numpy as np

from ._base import Kernel
from .stochastic import _Stochastic


def gather(xp, xt, idx, valid):
    """``xt`` (B, N, C) rows at ``idx`` (B, P); rows where ``valid`` is False read 0."""
    b = xp.arange(xt.shape[0])[:, None]
    if valid is True:
        return xt[b, idx]
    return xt[b, xp.where(valid, idx, 0)] * valid[..., None]


def scatter(xp, shape, idx, valid, values):
    """Adjoint of ``gather``: ``values`` (B, P, C) summed into a zero (B, N, C) array."""
    out = xp.zeros(shape, dtype=values.dtype)
    b = xp.broadcast_to(xp.arange(shape[0])[:, None], idx.shape)
    if valid is not True:
        idx, values = xp.where(valid, idx, 0), values * valid[..., None]
    xp.add.at(out, (b, idx), values)
    return out


def linear_corners(xp, coords, sizes):
    """Multilinear interpolation corners of float ``coords`` (list over axes of (B, P)).

    Yields ``(flat index, in range, weight, per-axis weight derivatives)`` for each corner.
    """
    lows = [xp.floor(c) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    for corner in itertools.product((0, 1), repeat=len(coords)):
        idx, valid, factors = 0, True, []
        for lo, fr, step, size in zip(lows, fracs, corner, sizes):
            i = lo.astype(np.int64) + step
            valid = valid & (i >= 0) & (i < size)
            idx = idx * size + i
            factors.append(fr if step else 1 - fr)
        weight = np.prod(factors, axis=0)
        derivs = []
        for a, step in enumerate(corner):
            others = [f for k, f in enumerate(factors) if k != a]
            rest = np.prod(others, axis=0) if others else 1.0
            derivs.append(rest if step else -rest)
        yield idx, valid, weight, derivs


class AffineGrid(Kernel):
    def setup(self):
        axes = []
        for n in self.size:
            # A single pixel sits at the centre (nnabla divides by zero there: NaN).
            g = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
            axes.append(g if self.align_corners else g * (n - 1) / n)
        mesh = np.meshgrid(*axes, indexing="ij")          # (D,) H, W order
        # Components are (x, y[, z]): the last axis first.
        cols = [m.ravel() for m in reversed(mesh)] + [np.ones(mesh[0].size)]
        self.base = self.xp.asarray(np.stack(cols, axis=1))   # (P, n + 1)

    def forward(self, xs):
        theta = xs[0]
        grid = self.base.astype(theta.dtype) @ theta.transpose(0, 2, 1)
        return (grid.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        g = dys[0].reshape(dys[0].shape[0], -1, len(self.size))
        return [g.transpose(0, 2, 1) @ self.base.astype(g.dtype)]


def _reflect(xp, s, low, high):
    """Mirror ``s`` into [low, high] repeatedly; returns the value and d(value)/ds."""
    length = high - low
    if length <= 0:
        return xp.full_like(s, low), xp.zeros_like(s)
    below, above = s < low, s > high
    d = xp.where(below, low - s, xp.where(above, s - high, 0.0))
    n = xp.floor(d / length)
    r = d - n * length
    odd = (n % 2) == 1
    folded = xp.where(below, xp.where(odd, high - r, low + r),
                      xp.where(odd, low + r, high - r))
    value = xp.where(below | above, folded, s)
    slope = xp.where(below | above, xp.where(odd, 1.0, -1.0), 1.0)
    return value, slope


def _clamp(xp, s, size):
    inside = (s >= 0) & (s <= size - 1)
    return xp.clip(s, 0, size - 1), inside.astype(s.dtype)


def source_coordinate(xp, s, size, padding_mode, align_corners):
    """Pixel coordinate of normalised ``s`` along an axis of ``size``; and d(coord)/ds."""
    if align_corners:
        f, df = (s + 1) * (size - 1) / 2, (size - 1) / 2
    else:
        f, df = ((s + 1) * size - 1) / 2, size / 2
    if padding_mode == "repeat":
        f, slope = _clamp(xp, f, size)
    elif padding_mode == "reflect" and align_corners:
        f, slope = _reflect(xp, f, 0.0, size - 1.0)
    elif padding_mode == "reflect":
        f, slope = _reflect(xp, 2 * f, -1.0, 2 * size - 1.0)
        f = f / 2
        f, inside = _clamp(xp, f, size)
        slope = slope * inside
    else:
        slope = 1.0
    return f, slope * df


class WarpByGrid(Kernel):
    def setup(self):
        x = self.in_shapes[0]
        self.n = len(x) - 2
        self.sizes = tuple(x[2:]) if not self.channel_last else tuple(x[1:-1])

    def layout(self, x):
        """x as (B, pixels, C)."""
        if self.channel_last:
            return x.reshape(x.shape[0], -1, x.shape[-1])
        return x.reshape(x.shape[0], x.shape[1], -1).transpose(0, 2, 1)

    def restore(self, yt, out_shape):
        if self.channel_last:
            return yt.reshape(out_shape)
        return yt.transpose(0, 2, 1).reshape(out_shape)

    def coords(self, grid):
        b = grid.shape[0]
        g = grid.reshape(b, -1, self.n)
        out = []
        for axis, size in enumerate(self.sizes):          # grid component n-1-axis
            out.append(source_coordinate(self.xp, g[..., self.n - 1 - axis], size,
                                         self.padding_mode, self.align_corners))
        return out

    def forward(self, xs):
        x, grid = xs
        xt = self.layout(x)
        coords = [c for c, _ in self.coords(grid)]
        if self.mode == "nearest":
            idx, valid = self.nearest(coords)
            yt = gather(self.xp, xt, idx, valid)
        else:
            yt = 0
            for idx, valid, w, _ in linear_corners(self.xp, coords, self.sizes):
                yt = yt + gather(self.xp, xt, idx, valid) * w[..., None]
        return (self.restore(yt, self.out_shapes[0]).astype(x.dtype, copy=False),)

    def nearest(self, coords):
        idx, valid = 0, True
        for c, size in zip(coords, self.sizes):
            i = self.xp.floor(c + 0.5).astype(np.int64)
            valid = valid & (i >= 0) & (i < size)
            idx = idx * size + i
        return idx, valid

    def backward(self, xs, ys, dys, propagate_down):
        x, grid = xs
        xp, xt, dyt = self.xp, self.layout(x), self.layout(dys[0])
        coords_slopes = self.coords(grid)
        coords = [c for c, _ in coords_slopes]
        shape = xt.shape
        dx = dgrid = None
        if self.mode == "nearest":
            idx, valid = self.nearest(coords)
            if propagate_down[0]:
                dx = scatter(xp, shape, idx, valid, dyt)
            if propagate_down[1]:
                dgrid = xp.zeros_like(grid)      # piecewise constant in the grid
        else:
            dx = xp.zeros(shape, dtype=dyt.dtype) if propagate_down[0] else None
            dcoord = [0] * self.n
            for idx, valid, w, derivs in linear_corners(xp, coords, self.sizes):
                if propagate_down[0]:
                    dx += scatter(xp, shape, idx, valid, dyt * w[..., None])
                if propagate_down[1]:
                    dv = (gather(xp, xt, idx, valid) * dyt).sum(axis=-1)
                    for a in range(self.n):
                        dcoord[a] = dcoord[a] + dv * derivs[a]
            if propagate_down[1]:
                comps = [dcoord[a] * coords_slopes[a][1] for a in range(self.n)]
                dgrid = xp.stack(comps[::-1], axis=-1).reshape(grid.shape)
        if dx is not None:
            dx = self.restore(dx, x.shape)
        return [dx, dgrid]


class WarpByFlow(Kernel):
    """Bilinear warp with border clamping, as nnabla (the fraction is not clamped)."""

    def corners(self, flow):
        xp = self.xp
        n, _, h, w = flow.shape
        gy, gx = xp.meshgrid(xp.arange(h), xp.arange(w), indexing="ij")
        xf = (gx + flow[:, 0]).reshape(n, -1)
        yf = (gy + flow[:, 1]).reshape(n, -1)
        x0, y0 = xp.floor(xf), xp.floor(yf)
        alpha, beta = xf - x0, yf - y0
        xl, xr = (xp.clip(v, 0, w - 1).astype(np.int64) for v in (x0, x0 + 1))
        yt, yb = (xp.clip(v, 0, h - 1).astype(np.int64) for v in (y0, y0 + 1))
        idx = [yt * w + xl, yt * w + xr, yb * w + xl, yb * w + xr]
        return idx, alpha, beta

    def forward(self, xs):
        data, flow = xs
        n, c = data.shape[:2]
        dt = data.reshape(n, c, -1).transpose(0, 2, 1)
        idx, a, b = self.corners(flow)
        ul, ur, ll, lr = (gather(self.xp, dt, i, True) for i in idx)
        a, b = a[..., None], b[..., None]
        upper, lower = ul + a * (ur - ul), ll + a * (lr - ll)
        y = upper + b * (lower - upper)
        return (y.transpose(0, 2, 1).reshape(data.shape).astype(data.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        data, flow = xs
        xp = self.xp
        n, c = data.shape[:2]
        dt = data.reshape(n, c, -1).transpose(0, 2, 1)
        dy = dys[0].reshape(n, c, -1).transpose(0, 2, 1)
        idx, a, b = self.corners(flow)
        a3, b3 = a[..., None], b[..., None]
        ddata = dflow = None
        if propagate_down[0]:
            weights = [(1 - a3) * (1 - b3), a3 * (1 - b3), (1 - a3) * b3, a3 * b3]
            g = sum(scatter(xp, dt.shape, i, True, dy * wgt) for i, wgt in zip(idx, weights))
            ddata = g.transpose(0, 2, 1).reshape(data.shape)
        if propagate_down[1]:
            ul, ur, ll, lr = (gather(xp, dt, i, True) for i in idx)
            da = ((1 - b3) * (ur - ul) + b3 * (lr - ll)) * dy
            db = ((ll + a3 * (lr - ll)) - (ul + a3 * (ur - ul))) * dy
            dflow = xp.stack([da.sum(-1), db.sum(-1)], axis=1).reshape(flow.shape)
        return [ddata, dflow]


class ImageAugmentation(_Stochastic):
    """Per image: a random similarity-plus-shear map from output to input pixels, flips,
    a random shift within ``pad``, bilinear sampling (0 outside), then brightness,
    contrast and Gaussian noise. With default arguments it is the identity."""

    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        h, w = x.shape[-2:]
        ho, wo = self.shape[-2:]
        lead = x.shape[:x.ndim - len(self.shape)]
        s = int(np.prod(lead))
        img = x.reshape(s, -1, h * w).transpose(0, 2, 1)          # (S, pixels, C)
        coords = self.source_coords(rng, s, h, w, ho, wo)
        y = 0
        for idx, valid, wgt, _ in linear_corners(xp, coords, (h, w)):
            y = y + gather(xp, img, idx, valid) * wgt[..., None]
        y = y.transpose(0, 2, 1)                                    # (S, C, pixels)
        y = self.photometric(rng, y)
        return (y.reshape(self.out_shapes[0]).astype(x.dtype, copy=False),)

    def source_coords(self, rng, s, h, w, ho, wo):
        xp = self.xp
        scale = rng.uniform(self.min_scale, self.max_scale, s)
        log_ar = np.log(self.aspect_ratio)
        ratio = np.exp(rng.uniform(-log_ar, log_ar, s))
        theta = rng.uniform(-self.angle, self.angle, s)
        shear = rng.uniform(-self.distortion, self.distortion, (2, s))
        flip_x = np.where(self.flip_lr & (rng.rand(s) < 0.5), -1.0, 1.0)
        flip_y = np.where(self.flip_ud & (rng.rand(s) < 0.5), -1.0, 1.0)
        shift = [rng.uniform(-p, p, s) for p in self.pad]
        gy, gx = np.meshgrid(np.arange(ho) - (ho - 1) / 2, np.arange(wo) - (wo - 1) / 2,
                             indexing="ij")
        u = flip_x[:, None] * gx.ravel() / (scale * np.sqrt(ratio))[:, None]
        v = flip_y[:, None] * gy.ravel() / (scale / np.sqrt(ratio))[:, None]
        u, v = u + shear[0][:, None] * v, v + shear[1][:, None] * u
        cos, sin = np.cos(theta)[:, None], np.sin(theta)[:, None]
        src_x = cos * u - sin * v + (w - 1) / 2 + shift[1][:, None]
        src_y = sin * u + cos * v + (h - 1) / 2 + shift[0][:, None]
        return [xp.asarray(src_y), xp.asarray(src_x)]

    def photometric(self, rng, y):
        s, c = y.shape[:2]
        shape = (s, c, 1) if self.brightness_each else (s, 1, 1)
        y = y + rng.uniform(-self.brightness, self.brightness, shape)
        log_c = np.log(self.contrast)
        shape = (s, c, 1) if self.contrast_each else (s, 1, 1)
        factor = np.exp(rng.uniform(-log_c, log_c, shape))
        y = (y - self.contrast_center) * factor + self.contrast_center
        if self.noise > 0:
            y = y + rng.normal(0, self.noise, y.shape)
        return y


KERNELS = {"AffineGrid": AffineGrid, "WarpByGrid": WarpByGrid, "WarpByFlow": WarpByFlow,
           "ImageAugmentation": ImageAugmentation}
