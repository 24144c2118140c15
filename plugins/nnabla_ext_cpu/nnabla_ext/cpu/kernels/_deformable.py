"""2-D deformable convolution (v2, with mask), written against ``xp``.

Columns are bilinear samples of ``x`` at every kernel tap shifted by its offset,
times the mask: ``cols[b, c, k, p]`` for channel ``c``, tap ``k`` and output pixel
``p``; then ``y = W @ cols`` per group, as an im2col convolution. Offsets and masks
have x's spatial size and are read at the strided output positions
(``[ho * stride_h, wo * stride_w]``). Samples outside the image read zeros.

The batch runs in chunks of samples (:func:`._columns.sample_ranges`): the columns, the
four corners' samples and their gradients are each the size of the columns, so a chunk's
columns are held to an eighth of the convolutions' column budget.
"""
from __future__ import annotations

import copy
import math

from ._base import Kernel
from ._columns import COLUMN_BUDGET, sample_ranges

CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


class DeformableConvolution(Kernel):
    column_budget = COLUMN_BUDGET // 8

    def setup(self):
        x, w = self.in_shapes[0], self.in_shapes[1]
        ba = self.base_axis
        self.batch = math.prod(x[:ba])
        self.channels, self.height, self.width = x[ba:]
        self.kernel = tuple(w[2:])
        self.taps = self.kernel[0] * self.kernel[1]
        self.out = tuple(self.out_shapes[0][ba + 1:])
        self.dg = self.deformable_group
        self.has_mask = len(self.in_shapes) > 3 and self.in_shapes[3] is not None
        self.has_bias = len(self.in_shapes) > 4 and self.in_shapes[4] is not None
        per_sample = self.channels * self.taps * math.prod(self.out)
        self.chunks = sample_ranges(self.batch, per_sample, self.column_budget) or ((0, 0),)
        self._parts = {self.batch: self}

    def _part(self, n):
        """This kernel on ``n`` samples: the one a chunk of the batch runs through."""
        if n not in self._parts:
            self._parts[n] = copy.copy(self)
            self._parts[n].batch = n
        return self._parts[n]

    def _samples(self, a, start, stop):
        """Samples [start, stop) of a batched input (x, offset, mask, dy), batch axis first."""
        per_sample = a.shape[self.base_axis:]
        return a.reshape((self.batch,) + per_sample)[start:stop]

    def _chunk_inputs(self, xs, start, stop):
        return [x if i in (1, 4) or x is None else self._samples(x, start, stop)
                for i, x in enumerate(xs)]

    def forward(self, xs):
        y = None
        for start, stop in self.chunks:
            part = self._part(stop - start).forward_samples(self._chunk_inputs(xs, start, stop))
            if y is None:
                y = self.xp.empty((self.batch,) + part.shape[1:], dtype=part.dtype)
            y[start:stop] = part
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        grads = [None] * len(xs)
        for start, stop in self.chunks:
            parts = self._part(stop - start).backward_samples(
                self._chunk_inputs(xs, start, stop), self._samples(dys[0], start, stop),
                propagate_down)
            for i, part in enumerate(parts):
                if part is None:
                    continue
                if i in (1, 4):   # weight and bias: sums over the samples
                    grads[i] = part if grads[i] is None else self.xp.add(grads[i], part,
                                                                         out=grads[i])
                    continue
                if grads[i] is None:
                    grads[i] = self.xp.empty((self.batch,) + part.shape[1:], dtype=part.dtype)
                grads[i][start:stop] = part
        return [None if g is None else g.reshape(self.in_shapes[i]) for i, g in enumerate(grads)]

    def _read(self, a, per_tap):
        """Offset (per_tap=2) or mask (1) values at the strided output positions:
        (B, DG, K, per_tap, Ho, Wo)."""
        s, (ho, wo) = self.stride, self.out
        a = a.reshape(self.batch, self.dg, self.taps, per_tap, self.height, self.width)
        return a[..., :(ho - 1) * s[0] + 1:s[0], :(wo - 1) * s[1] + 1:s[1]]

    def _sample_points(self, offset):
        """Sampling coordinates (B, DG, K, Ho, Wo) in the unpadded image."""
        xp = self.xp
        (ho, wo), kw = self.out, self.kernel[1]
        k = xp.arange(self.taps)
        base_y = (xp.arange(ho)[None, :, None] * self.stride[0] - self.pad[0]
                  + (k // kw)[:, None, None] * self.dilation[0])
        base_x = (xp.arange(wo)[None, None, :] * self.stride[1] - self.pad[1]
                  + (k % kw)[:, None, None] * self.dilation[1])
        off = self._read(offset, 2)
        return base_y + off[:, :, :, 0], base_x + off[:, :, :, 1]

    def _corners(self, py, px):
        """Per corner: (flat index into H*W, bilinear weight * validity)."""
        xp = self.xp
        y0, x0 = xp.floor(py), xp.floor(px)
        ly, lx = py - y0, px - x0
        out = []
        for dy, dx in CORNERS:
            yy, xx = y0 + dy, x0 + dx
            valid = (yy >= 0) & (yy < self.height) & (xx >= 0) & (xx < self.width)
            weight = (ly if dy else 1 - ly) * (lx if dx else 1 - lx) * valid
            index = (xp.clip(yy, 0, self.height - 1) * self.width
                     + xp.clip(xx, 0, self.width - 1)).astype(xp.int64)
            out.append((index, weight, valid))
        return out, ly, lx

    def _gather(self, xg, index):
        """xg: (B, DG, Cdg, H*W); index: (B, DG, K, Ho, Wo) -> (B, DG, Cdg, K, Ho, Wo)."""
        flat = index.reshape(index.shape[:2] + (1, -1))
        got = self.xp.take_along_axis(xg, flat, axis=3)
        return got.reshape(xg.shape[:3] + index.shape[2:])

    def _columns(self, x, offset, mask):
        xg = x.reshape(self.batch, self.dg, self.channels // self.dg, -1)
        corners, ly, lx = self._corners(*self._sample_points(offset))
        values = [self._gather(xg, index) for index, _, _ in corners]
        sampled = sum(v * wgt[:, :, None] for v, (_, wgt, _) in zip(values, corners))
        m = None if mask is None else self._read(mask, 1)[:, :, None, :, 0]
        cols = sampled if m is None else sampled * m
        return cols, (corners, values, ly, lx, sampled, m)

    def _group_view(self, a):
        """(B, C, K, P) data as (B, G, C/G * K, P)."""
        return a.reshape(self.batch, self.group, -1, math.prod(self.out))

    def _weight(self, w):
        return w.reshape(self.group, w.shape[0] // self.group, -1)

    def forward_samples(self, xs):
        """y of ``self.batch`` samples, shaped (batch, maps, *out)."""
        x, w, offset = xs[:3]
        mask = xs[3] if self.has_mask else None
        cols, _ = self._columns(x, offset, mask)
        y = self.xp.einsum("gok,bgkp->bgop", self._weight(w), self._group_view(cols))
        y = y.reshape((self.batch, -1) + self.out)
        if self.has_bias:
            y = y + xs[4].reshape(-1, 1, 1)
        return y

    def backward_samples(self, xs, dy, propagate_down):
        """The gradients of ``self.batch`` samples (weight and bias: their sums)."""
        xp = self.xp
        x, w, offset = xs[:3]
        mask = xs[3] if self.has_mask else None
        cols, state = self._columns(x, offset, mask)
        corners, values, ly, lx, sampled, m = state
        dy = dy.reshape((self.batch, self.group, -1, math.prod(self.out)))
        grads = [None] * len(xs)
        if propagate_down[1]:
            grads[1] = xp.einsum("bgop,bgkp->gok", dy, self._group_view(cols)).reshape(w.shape)
        if self.has_bias and propagate_down[4]:
            grads[4] = dy.sum(axis=(0, 3)).reshape(-1)
        dcols = xp.einsum("gok,bgop->bgkp", self._weight(w), dy).reshape(sampled.shape)
        if self.has_mask and propagate_down[3]:
            grads[3] = self._scatter_strided((dcols * sampled).sum(axis=2)[:, :, :, None], 1)
        dsampled = dcols if m is None else dcols * m
        if propagate_down[0]:
            grads[0] = self._dx(dsampled, corners).reshape(x.shape)
        if propagate_down[2]:
            grads[2] = self._doffset(dsampled, values, corners, ly, lx)
        return grads

    def _dx(self, dsampled, corners):
        """Scatter-add of the sample gradients into x's pixels (bincount: one pass)."""
        xp = self.xp
        pixels = self.height * self.width
        rows = self.batch * self.channels
        base = (xp.arange(rows) * pixels).reshape(self.batch, self.dg, -1, 1)
        dx = xp.zeros(rows * pixels, dtype=dsampled.dtype)
        for index, weight, _ in corners:
            lin = base + index.reshape(index.shape[:2] + (1, -1))
            contrib = (dsampled * weight[:, :, None]).reshape(lin.shape[:3] + (-1,))
            dx += xp.bincount(lin.ravel(), weights=contrib.ravel(), minlength=rows * pixels)
        return dx

    def _doffset(self, dsampled, values, corners, ly, lx):
        """d sampled / d (py, px), summed over the channels of each deformable group."""
        dpy = dpx = 0
        for (dy, dx), v, (_, _, valid) in zip(CORNERS, values, corners):
            v = v * valid[:, :, None]
            wy = (lx if dx else 1 - lx) * (1 if dy else -1)
            wx = (ly if dy else 1 - ly) * (1 if dx else -1)
            dpy = dpy + v * wy[:, :, None]
            dpx = dpx + v * wx[:, :, None]
        gy = (dsampled * dpy).sum(axis=2)
        gx = (dsampled * dpx).sum(axis=2)
        return self._scatter_strided(self.xp.stack([gy, gx], axis=3), 2)

    def _scatter_strided(self, g, per_tap):
        """(B, DG, K, per_tap, Ho, Wo) values into a zero map of offset/mask shape."""
        out = self.xp.zeros((self.batch, self.dg, self.taps, per_tap, self.height,
                             self.width), dtype=g.dtype)
        self._read(out, per_tap)[...] = g
        return out
