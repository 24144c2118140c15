"""Image sampling on the device: WarpByGrid and ImageAugmentation through ``grid_sample.cu``.

The CPU plugin's generic kernels build their interpolation corners with host numpy
(``np.prod`` over lists of arrays) and, for ImageAugmentation, add host random draws to the
image. Here the coordinates are computed elementwise on the device (WarpByGrid: the generic
``source_coordinate``, which is device-clean; ImageAugmentation: the generic draws on the
host, the same generator sequence as the CPU, then one copy of the small coordinate arrays),
and the gathers and their adjoints run as raw CUDA kernels.
"""
from __future__ import annotations

import math

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC

from .raw import launch


def _i32(v):
    return np.int32(v)


def _i64(v):
    return np.int64(v)


class Layout:
    """(batch, pixel, channel) strides of an image batch of ``pixels`` pixels."""

    def __init__(self, batch, pixels, channels, channel_last):
        self.batch, self.pixels, self.channels = batch, pixels, channels
        if channel_last:
            self.strides = (pixels * channels, channels, 1)
        else:
            self.strides = (pixels * channels, 1, pixels)

    def args(self):
        return tuple(_i64(s) for s in self.strides)


def _sizes(sizes):
    padded = list(sizes) + [1] * (3 - len(sizes))
    return [_i32(s) for s in padded]


def sample(xp, x, coords, sizes, x_layout, y_layout, nearest):
    """``y`` (flat, ``y_layout``) sampled from ``x`` at ``coords`` (B, P, n) float32."""
    x = xp.ascontiguousarray(x.astype(xp.float32, copy=False))
    y = xp.empty(y_layout.batch * y_layout.pixels * y_layout.channels, dtype=xp.float32)
    total = y.size
    launch(xp, "grid_sample", "grid_sample_forward", total,
           (x, coords, y, _i64(total), _i32(y_layout.pixels), _i32(y_layout.channels),
            _i32(len(sizes)), *_sizes(sizes), *x_layout.args(), *y_layout.args(),
            _i32(bool(nearest))))
    return y


def sample_backward_data(xp, dy, coords, sizes, x_layout, y_layout, nearest):
    """The adjoint of :func:`sample` in ``x`` (flat, ``x_layout``)."""
    dy = xp.ascontiguousarray(dy.astype(xp.float32, copy=False))
    dx = xp.zeros(x_layout.batch * x_layout.pixels * x_layout.channels, dtype=xp.float32)
    total = dy.size
    launch(xp, "grid_sample", "grid_sample_backward_data", total,
           (dy, coords, dx, _i64(total), _i32(y_layout.pixels), _i32(y_layout.channels),
            _i32(len(sizes)), *_sizes(sizes), *x_layout.args(), *y_layout.args(),
            _i32(bool(nearest))))
    return dx


def sample_backward_coords(xp, x, dy, coords, sizes, x_layout, y_layout):
    """d(sum(dy * y))/d(coords) of multilinear :func:`sample`; (B, P, n) float32."""
    x = xp.ascontiguousarray(x.astype(xp.float32, copy=False))
    dy = xp.ascontiguousarray(dy.astype(xp.float32, copy=False))
    dcoords = xp.empty(coords.shape, dtype=xp.float32)
    total = y_layout.batch * y_layout.pixels
    launch(xp, "grid_sample", "grid_sample_backward_coords", total,
           (x, dy, coords, dcoords, _i64(total), _i32(y_layout.pixels),
            _i32(y_layout.channels), _i32(len(sizes)), *_sizes(sizes), *x_layout.args(),
            *y_layout.args()))
    return dcoords


class WarpByGrid(GENERIC["WarpByGrid"]):
    """Warps by a normalised sampling grid with the ``grid_sample`` CUDA kernels."""

    def layouts(self):
        x, y = self.in_shapes[0], self.out_shapes[0]
        channels = x[-1] if self.channel_last else x[1]
        out_pixels = math.prod(y[1:-1] if self.channel_last else y[2:])
        return (Layout(x[0], math.prod(self.sizes), channels, self.channel_last),
                Layout(x[0], out_pixels, channels, self.channel_last))

    def pixel_coords(self, grid):
        """(B, P, n) float32 pixel coordinates and, per axis, d(coordinate)/d(grid)."""
        xp = self.xp
        pairs = self.coords(grid.astype(xp.float32, copy=False))
        coords = xp.stack([c.astype(xp.float32, copy=False) for c, _ in pairs], axis=-1)
        return xp.ascontiguousarray(coords), [s for _, s in pairs]

    def forward(self, xs):
        x, grid = xs
        coords, _ = self.pixel_coords(grid)
        xl, yl = self.layouts()
        y = sample(self.xp, x, coords, self.sizes, xl, yl, self.mode == "nearest")
        return (y.reshape(self.out_shapes[0]).astype(x.dtype, copy=False),)

    def backward(self, xs, ys, dys, propagate_down):
        x, grid = xs
        xp = self.xp
        coords, slopes = self.pixel_coords(grid)
        xl, yl = self.layouts()
        nearest = self.mode == "nearest"
        dx = dgrid = None
        if propagate_down[0]:
            dx = sample_backward_data(xp, dys[0], coords, self.sizes, xl, yl, nearest)
            dx = dx.reshape(x.shape)
        if propagate_down[1]:
            if nearest:
                dgrid = xp.zeros(grid.shape, dtype=xp.float32)  # piecewise constant
            else:
                dc = sample_backward_coords(xp, x, dys[0], coords, self.sizes, xl, yl)
                comps = [dc[..., a] * slopes[a] for a in range(self.n)]
                dgrid = xp.stack(comps[::-1], axis=-1).reshape(grid.shape)
        return [dx, dgrid]


class ImageAugmentation(GENERIC["ImageAugmentation"]):
    """The generic augmentation's draws (host generator, same sequence as the CPU), with
    the bilinear resampling by the ``grid_sample`` kernel and the photometric changes on the
    device."""

    def sample(self, xs, rng):
        x = xs[0]
        xp = self.xp
        h, w = x.shape[-2:]
        ho, wo = self.shape[-2:]
        lead = x.shape[:x.ndim - len(self.shape)]
        s = math.prod(lead)
        channels = math.prod(x.shape[len(lead):-2])
        src_y, src_x = self.source_coords(rng, s, h, w, ho, wo)      # device (S, P)
        coords = xp.ascontiguousarray(xp.stack([src_y, src_x], axis=-1).astype(xp.float32))
        y = sample(xp, x, coords, (h, w), Layout(s, h * w, channels, False),
                   Layout(s, ho * wo, channels, False), nearest=False)
        y = self.photometric(rng, y.reshape(s, channels, ho * wo))
        return (y.reshape(self.out_shapes[0]).astype(x.dtype, copy=False),)

    def photometric(self, rng, y):
        """The generic photometric changes, with each host draw copied to the device."""
        xp = self.xp
        s, c = y.shape[:2]
        shape = (s, c, 1) if self.brightness_each else (s, 1, 1)
        y = y + xp.asarray(rng.uniform(-self.brightness, self.brightness, shape))
        log_c = np.log(self.contrast)
        shape = (s, c, 1) if self.contrast_each else (s, 1, 1)
        factor = xp.asarray(np.exp(rng.uniform(-log_c, log_c, shape)))
        y = (y - self.contrast_center) * factor + self.contrast_center
        if self.noise > 0:
            y = y + xp.asarray(rng.normal(0, self.noise, y.shape))
        return y


KERNELS = {"WarpByGrid": WarpByGrid, "ImageAugmentation": ImageAugmentation}
