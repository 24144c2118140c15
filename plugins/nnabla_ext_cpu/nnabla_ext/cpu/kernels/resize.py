"""Kernels of Interpolate and ONNXResize.

Every mode here is separable: the output is the input multiplied along each resized axis
by an (out, in) weight matrix built once in ``setup``. Backward multiplies by the
transposed matrices in reverse order.
"""
from __future__ import annotations

import numpy as np

from ._base import Kernel


def apply_along(xp, x, matrix, axis):
    """Contract ``x``'s ``axis`` with ``matrix`` (out, in); the result keeps the axis order."""
    moved = xp.moveaxis(x, axis, -1)
    return xp.moveaxis(moved @ matrix.T.astype(x.dtype, copy=False), -1, axis)


def _scatter(rows, cols, weights, n_out, n_in):
    m = np.zeros((n_out, n_in))
    np.add.at(m, (rows, cols), weights)
    return m


def interpolate_scale(n_in, n_out, align_corners):
    if n_out <= 1:
        return 0.0
    return (n_in - 1) / (n_out - 1) if align_corners else n_in / n_out


def linear_matrix(n_in, n_out, align_corners, half_pixel):
    """Interpolate's linear weights along one axis (float64, (n_out, n_in))."""
    scale = interpolate_scale(n_in, n_out, align_corners)
    d = np.arange(n_out)
    src = np.maximum(0.0, scale * (d + 0.5) - 0.5) if half_pixel else scale * d
    i0 = np.minimum(src.astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    frac = src - i0
    return _scatter(np.r_[d, d], np.r_[i0, i1], np.r_[1 - frac, frac], n_out, n_in)


def nearest_matrix(n_in, n_out, align_corners, half_pixel, half_pixel_for_nn):
    """Interpolate's nearest-neighbour selection along one axis (truncating the source)."""
    d = np.arange(n_out)
    if half_pixel_for_nn:
        src = n_in / n_out * (d + 0.5)
    else:
        scale = interpolate_scale(n_in, n_out, align_corners)
        src = np.maximum(0.0, scale * (d + 0.5) - 0.5) if half_pixel else scale * d
    idx = np.minimum(src.astype(np.int64), n_in - 1)
    return _scatter(d, idx, np.ones(n_out), n_out, n_in)


class _Separable(Kernel):
    """Applies ``self.matrices`` ({axis: (out, in) matrix}) forward, transposed backward."""

    def forward(self, xs):
        y = xs[0]
        for axis, m in self.matrices.items():
            y = apply_along(self.xp, y, m, axis)
        return (self.finish(y),)

    def finish(self, y):
        return y

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None]
        g = dys[0]
        for axis, m in reversed(list(self.matrices.items())):
            g = apply_along(self.xp, g, m.T, axis)
        return [g]


class Interpolate(_Separable):
    def setup(self):
        x = self.in_shapes[0]
        n = len(self.output_size)
        first = len(x) - n - (1 if self.channel_last else 0)
        self.matrices = {}
        for k, n_out in enumerate(self.output_size):
            n_in = x[first + k]
            if self.mode == "linear":
                m = linear_matrix(n_in, n_out, self.align_corners, self.half_pixel)
            else:
                m = nearest_matrix(n_in, n_out, self.align_corners, self.half_pixel,
                                   self.half_pixel_for_nn)
            self.matrices[first + k] = self.xp.asarray(m)


def onnx_source(mode, x, n_in, n_out, scale, start, end):
    """Source coordinates of output positions ``x`` under an ONNX coordinate mode."""
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if n_out > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return x * (n_in - 1) / (n_out - 1) if n_out > 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if n_out > 1:                                          # tf_crop_and_resize
        return start * (n_in - 1) + x * (end - start) * (n_in - 1) / (n_out - 1)
    return np.full_like(x, 0.5 * (start + end) * (n_in - 1))


def _round_nearest(src, nearest_mode):
    if nearest_mode == "floor":
        return np.floor(src)
    if nearest_mode == "ceil":
        return np.ceil(src)
    tie = np.abs(src - np.floor(src) - 0.5) < 1e-6
    tie_value = np.floor(src) if nearest_mode == "round_prefer_floor" else np.ceil(src)
    return np.where(tie, tie_value, np.round(src))


def cubic_weights(t, a):
    """Keys' cubic convolution kernel at distances ``t``."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def onnx_matrix(k, src, n_in, n_out):
    """ONNXResize weights along one axis for the kernel's mode; float64 (n_out, n_in)."""
    d = np.arange(n_out)
    if k.mode == "nearest":
        idx = np.clip(_round_nearest(src, k.nearest_mode), 0, n_in - 1).astype(np.int64)
        return _scatter(d, idx, np.ones(n_out), n_out, n_in)
    if k.mode == "linear":
        s = np.clip(src, 0, n_in - 1)
        i0 = np.minimum(s.astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        frac = s - i0
        return _scatter(np.r_[d, d], np.r_[i0, i1], np.r_[1 - frac, frac], n_out, n_in)
    base = np.floor(src).astype(np.int64)
    taps = base[:, None] + np.arange(-1, 3)
    w = cubic_weights(src[:, None] - taps, k.cubic_coeff_a)
    if k.exclude_outside:
        w = np.where((taps >= 0) & (taps < n_in), w, 0.0)
        w = w / w.sum(axis=1, keepdims=True)
    rows = np.repeat(d, 4)
    return _scatter(rows, np.clip(taps, 0, n_in - 1).ravel(), w.ravel(), n_out, n_in)


class ONNXResize(_Separable):
    def setup(self):
        x, y = self.in_shapes[0], self.out_shapes[0]
        ndim = len(x)
        crop = self.coordinate_transformation_mode == "tf_crop_and_resize"
        self.matrices, self.outside = {}, None
        for axis in range(ndim):
            n_in, n_out = x[axis], y[axis]
            scale = self.scales[axis] if self.scales else n_out / n_in
            if n_in == n_out and scale == 1:
                continue              # ONNX Runtime leaves such axes alone, whatever the mode
            start, end = (self.roi[axis], self.roi[ndim + axis]) if self.roi else (0.0, 1.0)
            src = onnx_source(self.coordinate_transformation_mode, np.arange(n_out, dtype=float),
                              n_in, n_out, scale, start, end)
            self.matrices[axis] = self.xp.asarray(onnx_matrix(self, src, n_in, n_out))
            if crop:
                out = (src < 0) | (src > n_in - 1)
                shape = [1] * ndim
                shape[axis] = n_out
                out = out.reshape(shape)
                self.outside = out if self.outside is None else (self.outside | out)

    def finish(self, y):
        if self.outside is None or not self.outside.any():
            return y
        return self.xp.where(self.outside, y.dtype.type(self.extrapolation_value), y)


KERNELS = {"Interpolate": Interpolate, "ONNXResize": ONNXResize}
