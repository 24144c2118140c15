"""RandomErase on the device: the rectangles and replacement values are drawn on the host
(the generator sequence of the CPU plugin, so a seed gives the CPU's result), and the masks
and the replacement are device operations.

The generic kernel mixes its host draws into device computations (``xp.minimum`` over host
arrays) and counts each patch's pixels with a device reduction read back per patch; here the
counts come from the rectangles themselves, so a forward pass reads nothing back.
"""
from __future__ import annotations

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC


class RandomErase(GENERIC["RandomErase"]):
    """Erases ``n`` random rectangles per sample; the draws on the host, the writes on the
    device."""

    def rectangles(self, rng):
        """The generic draws, computed with numpy: host arrays (n, samples[, C])."""
        device = self.xp
        self.xp = np
        try:
            return super().rectangles(rng)
        finally:
            self.xp = device

    def counts(self, rects):
        """Erased pixels of each patch over the batch (host integers, from the rectangles)."""
        erase, top, bottom, left, right = rects
        rows = np.minimum(bottom, self.h - 1) - top + 1
        cols = np.minimum(right, self.w - 1) - left + 1
        per = np.where(erase, rows * cols, 0).reshape(self.n, -1).sum(axis=1)
        return per * (self.c if self.share else 1)

    def patch_masks(self, rects):
        """Device masks (n, samples, C or 1, H, W) of ``rects`` (the generic construction)."""
        xp = self.xp
        erase, top, bottom, left, right = (xp.asarray(a) for a in rects)
        if self.share:
            erase, top, bottom, left, right = (a[..., None] for a in
                                               (erase, top, bottom, left, right))
        rows, cols = xp.arange(self.h), xp.arange(self.w)
        in_rows = (rows >= top[..., None]) & (rows <= bottom[..., None])
        in_cols = (cols >= left[..., None]) & (cols <= right[..., None])
        return erase[..., None, None] & in_rows[..., :, None] & in_cols[..., None, :]

    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        y = x.reshape((self.samples,) + x.shape[self.base_axis:]).copy()
        erased = xp.zeros(y.shape, dtype=bool)
        rects = self.rectangles(rng)
        counts = self.counts(rects)
        for mask, count in zip(self.patch_masks(rects), counts):  # later patches win
            if not count:
                continue
            if self.channel_last:
                mask = xp.moveaxis(mask, 1, -1)
            mask = xp.broadcast_to(mask, y.shape)
            y[mask] = xp.asarray(rng.uniform(*self.replacements, int(count)))
            erased |= mask
        self.erased = erased.reshape(x.shape)
        return (y.reshape(x.shape),)


KERNELS = {"RandomErase": RandomErase}
