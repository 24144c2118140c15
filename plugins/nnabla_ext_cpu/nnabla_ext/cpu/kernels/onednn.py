"""Convolutions, deconvolutions and batched matrix products through oneDNN
(:mod:`nnabla_ext.cpu._onednn`).

Each kernel asks, at setup, for the oneDNN plan of its geometry (cached by the compiled
module, see ``src/onednn_conv.cpp``) and runs its three passes on it: a convolution's
forward, data gradient and weight (+ bias) gradient are oneDNN's convolution forward,
backward-data and backward-weights; a deconvolution is the same convolution the other way
round (its forward is the backward data, its data gradient the forward, its weight
gradient the backward weights with the roles of the maps exchanged). oneDNN runs the
whole pass on its OpenMP team (sized by ``nnabla_ext.cpu.set_num_threads``), where the
im2col path alternated C++ loops and BLAS calls.

A kernel keeps the im2col + GEMM path of its base class (:mod:`.native`) when oneDNN is
off or missing (``NNABLA_CPU_ONEDNN=0``, :func:`nnabla_ext.cpu._onednn.set_enabled`),
when it is not worth it for the geometry (:func:`worth_onednn`), when oneDNN refuses the
geometry (more than three spatial axes, say), for an empty batch, and for arrays other
than float32. Results are the same sums in another order: they
agree with the im2col path to float32 rounding (tests/functions/test_onednn_conv.py).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _onednn
from . import math as math_kernels
from . import native
from ._columns import add_bias, bias_grad


def _f32(*arrays):
    """Whether every given array is float32 (None entries are ignored)."""
    return all(a is None or a.dtype == np.float32 for a in arrays)


def _c(a):
    return np.ascontiguousarray(a)


# oneDNN pays off where the maps outweigh the weights: at least one output position (batch
# times output pixels) per this many weights.
WEIGHTS_PER_POSITION = 64


def worth_onednn(geo, grid_channels):
    """Whether oneDNN is expected to beat im2col + GEMM on convolution geometry ``geo``
    (seen from the image side; ``grid_channels``: channels of the maps on the output grid).

    oneDNN reorders the weights into its blocked layout on every pass, while OpenBLAS
    reads them as they are: where there are few output positions per weight (the late
    stages of a ResNet, batch 1), that reorder costs more than oneDNN's faster inner
    loops save. A 1x1 convolution is a plain GEMM on the im2col path. Measured here on
    2 threads, forward + backward, oneDNN / im2col (benchmarks/README.md, issue 10):
    64x128x8x8 3x3 0.69, 32x64x32x32 3x3 0.84, 32x512x4x4 3x3 1.34, 1x512x4x4 3x3 3.6,
    32x64x32x32 1x1 stride 2 1.81.
    """
    if math.prod(geo.kernel) == 1:
        return False
    positions = geo.batch * math.prod(geo.out_shape)
    weights = grid_channels * (geo.channels // geo.groups) * math.prod(geo.kernel)
    return positions * WEIGHTS_PER_POSITION >= weights


class _OneDNN:
    """Mixin: the oneDNN plan of ``self.geo`` (the convolution seen from the image side).

    ``geo.channels`` are the image's channels: a convolution's input, a deconvolution's
    output; ``grid_channels`` those of the maps on the output grid.
    """

    def setup(self):
        super().setup()
        self.plan = None
        g = self.geo
        mode = _onednn.enabled()
        if not mode or g.batch == 0 or not 1 <= len(g.kernel) <= 3:
            return
        if mode != "always" and not worth_onednn(g, self.grid_channels):
            return
        try:
            self.plan = _onednn.conv.plan(
                g.batch, g.channels, self.grid_channels, g.groups, list(g.in_shape),
                list(g.out_shape), list(g.kernel), list(g.pad), list(g.stride),
                list(g.dilation), g.channel_last, g.channel_last)
        except ValueError:   # a geometry oneDNN does not take: keep im2col + GEMM
            self.plan = None


class _ConvolutionPasses(_OneDNN):
    """y = conv(x, w) + b on oneDNN; the image is x."""

    def forward(self, xs):
        b = xs[2] if self.has_bias() else None
        if self.plan is None or not _f32(xs[0], xs[1], b):
            return super().forward(xs)
        y = self.plan.forward(_c(xs[0]), _c(xs[1]), None if b is None else _c(b))
        return (y.reshape(self.out_shapes[0]),)

    def backward(self, xs, ys, dys, propagate_down):
        x, w, dy = xs[0], xs[1], dys[0]
        if self.plan is None or not _f32(x, w, dy):
            return super().backward(xs, ys, dys, propagate_down)
        grads = [None] * len(xs)
        dy = _c(dy)
        if propagate_down[0]:
            grads[0] = self.plan.backward_data(dy, _c(w)).reshape(self.in_shapes[0])
        want_bias = self.has_bias() and propagate_down[2]
        if propagate_down[1]:
            result = self.plan.backward_weights(dy, _c(x), want_bias)
            if want_bias:
                grads[1], grads[2] = result[0].reshape(self.in_shapes[1]), result[1]
            else:
                grads[1] = result.reshape(self.in_shapes[1])
        elif want_bias:
            grads[2] = bias_grad(dy, self.channel_axis)
        if want_bias:
            grads[2] = grads[2].reshape(self.in_shapes[2])
        return grads


class _DeconvolutionPasses(_OneDNN):
    """y = conv^T(x, w) + b: oneDNN's convolution backward data; the image is y."""

    def forward(self, xs):
        b = xs[2] if self.has_bias() else None
        if self.plan is None or not _f32(xs[0], xs[1], b):
            return super().forward(xs)
        y = self.plan.backward_data(_c(xs[0]), _c(xs[1])).reshape(self.out_shapes[0])
        return (add_bias(np, y, b, self.channel_axis) if b is not None else y,)

    def backward(self, xs, ys, dys, propagate_down):
        x, w, dy = xs[0], xs[1], dys[0]
        if self.plan is None or not _f32(x, w, dy):
            return super().backward(xs, ys, dys, propagate_down)
        grads = [None] * len(xs)
        dy = _c(dy)
        if propagate_down[0]:
            grads[0] = self.plan.forward(dy, _c(w)).reshape(self.in_shapes[0])
        if propagate_down[1]:
            grads[1] = self.plan.backward_weights(_c(x), dy, False).reshape(self.in_shapes[1])
        if self.has_bias() and propagate_down[2]:
            grads[2] = bias_grad(dy, self.channel_axis).reshape(self.in_shapes[2])
        return grads


class Convolution(_ConvolutionPasses, native.Convolution):
    pass


class DepthwiseConvolution(_ConvolutionPasses, native.DepthwiseConvolution):
    """One group per input channel: weights (C * m, *K) are oneDNN's (C, m, 1, *K)."""


class Deconvolution(_DeconvolutionPasses, native.Deconvolution):
    pass


class DepthwiseDeconvolution(_DeconvolutionPasses, native.DepthwiseDeconvolution):
    """One group per output channel (``divisor`` inputs each)."""


# Where oneDNN's matmul beats numpy's (measured here on 2 threads, best of 300 calls):
# from about 4M multiply-accumulates in all (64 products 64x32 by 32x64: 230 us against
# 245; 64 of 128x32 by 32x128: 468 against 724), as long as each product is small enough
# that OpenBLAS splitting it across threads pays less than splitting the batch (2 of
# 512x512 by 512x512: 4.6-9.1 ms against 3.4). Below the first bound its per-call cost and
# single-threaded GEMM lose (8 of 32x16 by 16x32: 19 us against 12).
MATMUL_MIN_WORK = 1 << 22
MATMUL_MAX_PRODUCT = 1 << 24


class BatchMatmul(math_kernels.BatchMatmul):
    """The generic kernel's products on oneDNN's matmul primitive, which spreads the batch
    over its OpenMP team (numpy runs the products one after another, each split across
    BLAS threads). Operands are read through their strides, so transposes are views.

    A product keeps numpy's matmul when oneDNN is off or missing, for arrays other than
    float32, for empty operands, below :data:`MATMUL_MIN_WORK` multiply-accumulates in all
    or above :data:`MATMUL_MAX_PRODUCT` per matrix (unless ``set_enabled('always')``), and
    where oneDNN refuses the strides (negative ones, say).
    Results are the same sums in another order: they agree with numpy's to float32
    rounding (tests/functions/test_onednn_matmul.py).
    """

    def setup(self):
        super().setup()
        self.onednn = _onednn.enabled()
        self.refused = set()    # (shapes, strides) oneDNN did not take

    def product(self, p, q):
        if self.onednn and p.dtype == np.float32 and q.dtype == np.float32:
            each = math.prod(p.shape[-2:]) * q.shape[-1]
            work = math.prod(np.broadcast_shapes(p.shape[:-2], q.shape[:-2])) * each
            worth = MATMUL_MIN_WORK <= work and each <= MATMUL_MAX_PRODUCT
            key = (p.shape, p.strides, q.shape, q.strides)
            if work and (worth or self.onednn == "always") and key not in self.refused:
                try:
                    return _onednn.conv.matmul_plan(p, q).run(p, q)
                except ValueError:
                    self.refused.add(key)
        return super().product(p, q)


KERNELS = {
    "BatchMatmul": BatchMatmul,
    "Convolution": Convolution,
    "Deconvolution": Deconvolution,
    "DepthwiseConvolution": DepthwiseConvolution,
    "DepthwiseDeconvolution": DepthwiseDeconvolution,
}

# oneDNN's team starts at the native loops' thread count (nnabla_ext.cpu.set_num_threads
# keeps the two equal afterwards).
_onednn.set_num_threads(native._native.num_threads())
