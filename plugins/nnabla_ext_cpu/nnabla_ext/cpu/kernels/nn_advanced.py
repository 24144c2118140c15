"""Kernels of the composite and sampling layers, written against ``xp``.

FusedConvolution chains the kernels of its parts (pad, convolution, batch
normalization, activation) from this backend's table, so it computes exactly what
the separate functions compute. MaxPoolingBackward reuses the pooling helpers of
:mod:`.neural_network`; the deformable convolution lives in :mod:`._deformable`.
"""
from __future__ import annotations

import math

from ._base import Kernel
from ._deformable import DeformableConvolution
from .neural_network import _offsets, _pool_pad, _pool_taps, max_pool, max_pool_grad, pool_geometry


def sub_kernel(name, in_shapes, **args):
    """A kernel of this backend for function ``name`` on ``in_shapes``: (kernel, y shape)."""
    from nnabla.function_spec import SPECS, bind_args, infer

    from . import CPU_KERNELS  # imported late: the table is built from this module
    spec = SPECS[name]
    bound, out_shapes = infer(spec, in_shapes, bind_args(spec, args))
    return CPU_KERNELS[name](spec, bound, list(in_shapes), out_shapes), out_shapes[0]


ACTIVATIONS = {"identity": "Identity", "relu": "ReLU", "sigmoid": "Sigmoid", "tanh": "Tanh",
               "leaky_relu": "LeakyReLU", "elu": "ELU", "relu6": "ReLU6"}


class FusedConvolution(Kernel):
    """pad -> convolution -> [batch normalization] -> [+ z] -> nonlinearity.

    Each stage is this backend's kernel of that function; forward keeps the
    intermediate arrays, backward runs the stages' backward in reverse.
    """

    def setup(self):
        shapes = list(self.in_shapes) + [None] * (8 - len(self.in_shapes))
        x, w, b, beta, gamma, mean, var = shapes[:7]
        n = len(x) - self.base_axis - 1
        widths = tuple(self.pad) if len(self.pad) == 2 * n else \
            tuple(p for p in self.pad for _ in range(2))
        pad_width = widths + ((0, 0) if self.channel_last else ())
        self.stages = []
        self.pad_k, y = sub_kernel("Pad", [x], pad_width=pad_width, mode=self.pad_mode,
                                   constant_value=self.constant_value)
        self.conv_k, y = sub_kernel("Convolution", [y, w, b], base_axis=self.base_axis,
                                    pad=(0,) * n, stride=self.stride, dilation=self.dilation,
                                    group=self.group, channel_last=self.channel_last)
        self.bn_k = None
        if beta is not None:
            axis = len(y) - 1 if self.channel_last else self.base_axis
            self.bn_k, _ = sub_kernel("BatchNormalization", [y, beta, gamma, mean, var],
                                      axes=[axis], decay_rate=self.decay_rate, eps=self.eps,
                                      batch_stat=self.batch_stat)
        args = {}
        if self.nonlinearity in ("leaky_relu", "elu"):
            args["alpha"] = self.nonlinearity_args[0]
        self.act_k, _ = sub_kernel(ACTIVATIONS[self.nonlinearity], [y], **args)

    def _stored(self, a):
        """Round to the storage type between stages, as separate functions would (half)."""
        if self.storage_dtype is None:
            return a
        return a.astype(self.storage_dtype).astype(a.dtype)

    def forward(self, xs):
        x, w, b, beta, gamma, mean, var, z = list(xs) + [None] * (8 - len(xs))
        (padded,) = self.pad_k.forward([x])
        padded = self._stored(padded)
        (conv,) = self.conv_k.forward([padded, w, b])
        conv = self._stored(conv)
        h = conv
        if self.bn_k is not None:
            (h,) = self.bn_k.forward([conv, beta, gamma, mean, var])
            h = self._stored(h)
        pre = h if z is None else self._stored(h + z)
        (y,) = self.act_k.forward([pre])
        self._saved = (padded, conv, pre, y)
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        xs = list(xs) + [None] * (8 - len(xs))
        pd = list(propagate_down) + [False] * (8 - len(propagate_down))
        x, w, b, beta, gamma, mean, var, _ = xs
        if getattr(self, "_saved", None) is None:
            self.forward(xs)
        padded, conv, pre, y = self._saved
        (dpre,) = self.act_k.backward([pre], [y], [dys[0]], [True])
        grads = [None] * 8
        grads[7] = dpre if pd[7] else None
        dconv = dpre
        if self.bn_k is not None:
            bn_pd = [True] + pd[3:7]
            bn_grads = self.bn_k.backward([conv, beta, gamma, mean, var], [pre], [dpre], bn_pd)
            dconv = bn_grads[0]
            grads[3:7] = [g if p else None for g, p in zip(bn_grads[1:], pd[3:7])]
        conv_pd = [True, pd[1], b is not None and pd[2]]
        dpad, grads[1], grads[2] = (self.conv_k.backward([padded, w, b], [conv], [dconv],
                                                         conv_pd) + [None])[:3]
        if pd[0]:
            grads[0] = self.pad_k.backward([x], [padded], [dpad], [True])[0]
        return grads[:len(xs)]


class MaxPoolingBackward(Kernel):
    """dx = max pooling's input gradient for ``dy``; its own backward gathers ddx at the
    maxima (the gradient for ``x`` is zero: the routing is piecewise constant in x)."""

    def setup(self):
        self.geo = pool_geometry(self.in_shapes[1], self.in_shapes[0], self.kernel,
                                 self.stride, self.pad, self.channel_last)
        self._arg = None

    def forward(self, xs):
        dy, x = xs
        _, self._arg = max_pool(self.xp, x, self.geo)
        return (max_pool_grad(self.xp, dy, self._arg, self.geo).reshape(x.shape),)

    def backward(self, xs, ys, dys, propagate_down):
        xp, g = self.xp, self.geo
        if self._arg is None:
            self._arg = max_pool(xp, xs[1], g)[1]
        grads = [None, None]
        if propagate_down[0]:
            padded = xp.pad(dys[0].reshape(g.x_view), _pool_pad(g))
            ddy = xp.zeros(g.y_view, dtype=dys[0].dtype)
            for number, j in enumerate(_offsets(g)):
                ddy = xp.where(self._arg == number, padded[_pool_taps(g, j)], ddy)
            grads[0] = ddy.reshape(self.in_shapes[0])
        if propagate_down[1]:
            grads[1] = xp.zeros(self.in_shapes[1], dtype=dys[0].dtype)
        return grads


class AdaptiveSeparableConvolution(Kernel):
    """y[n, c, h, w] = sum_{j, i} kv[n, j, h, w] kh[n, i, h, w] x[n, c, h + j, w + i]."""

    def _taps(self):
        kv, kh = self.in_shapes[1][1], self.in_shapes[2][1]
        return ((j, i) for j in range(kv) for i in range(kh))

    def forward(self, xs):
        x, kv, kh = xs
        ho, wo = self.out_shapes[0][2:]
        y = self.xp.zeros(self.out_shapes[0], dtype=x.dtype)
        for j, i in self._taps():
            y += (kv[:, j] * kh[:, i])[:, None] * x[:, :, j:j + ho, i:i + wo]
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        xp, (x, kv, kh), dy = self.xp, xs, dys[0]
        ho, wo = self.out_shapes[0][2:]
        dx, dkv, dkh = xp.zeros_like(x), xp.zeros_like(kv), xp.zeros_like(kh)
        for j, i in self._taps():
            patch = x[:, :, j:j + ho, i:i + wo]
            a = (dy * patch).sum(axis=1)
            dkv[:, j] += a * kh[:, i]
            dkh[:, i] += a * kv[:, j]
            dx[:, :, j:j + ho, i:i + wo] += dy * (kv[:, j] * kh[:, i])[:, None]
        return [g if p else None for g, p in zip((dx, dkv, dkh), propagate_down)]


def roi_axis_matrix(xp, start, end, out, ratio, size, dtype):
    """(out, size) matrix averaging the bilinear weights of ``out * ratio`` samples
    spread evenly over [start, end); samples beyond [-1, size] count as zero."""
    count = out * ratio
    pos = start + (xp.arange(count) + 0.5) * ((end - start) / count)
    inside = (pos >= -1) & (pos <= size)
    pos = xp.clip(pos, 0, size - 1)
    low = xp.floor(pos).astype(xp.int64)
    high = xp.ceil(pos).astype(xp.int64)
    frac = pos - low
    m = xp.zeros((count, size), dtype=dtype)
    rows = xp.arange(count)
    xp.add.at(m, (rows, low), (1 - frac) * inside)
    xp.add.at(m, (rows, high), frac * inside)
    return m.reshape(out, ratio, size).sum(axis=1) / ratio


class RoiAlign(Kernel):
    """Per box, y = A_y @ image @ A_x^T with bilinear averaging matrices A (separable)."""

    def setup(self):
        shape = self.in_shapes[0]
        self.height, self.width = (shape[1:3] if self.channel_last else shape[2:4])
        self.subscripts = "oh,hwc,pw->opc" if self.channel_last else "oh,chw,pw->cop"

    def _matrices(self, box, dtype):
        xp, (oh, ow), (sy, sx) = self.xp, self.output_size, self.spatial_scale
        x1, y1, x2, y2 = (float(box[1]) * sx - 0.5, float(box[2]) * sy - 0.5,
                          float(box[3]) * sx - 0.5, float(box[4]) * sy - 0.5)
        if self.sampling_ratio > 0:
            ry = rx = self.sampling_ratio
        else:
            ry = math.ceil(max(y2 - y1, 1) / oh)
            rx = math.ceil(max(x2 - x1, 1) / ow)
        return (roi_axis_matrix(xp, y1, y2, oh, ry, self.height, dtype),
                roi_axis_matrix(xp, x1, x2, ow, rx, self.width, dtype))

    def _batch_index(self, box):
        b = int(box[0])
        if not 0 <= b < self.in_shapes[0][0]:
            raise ValueError(f"{self.spec.api_name}: argument 'boxes' holds batch index {b}; "
                             f"expected [0, {self.in_shapes[0][0]})")
        return b

    def forward(self, xs):
        image, boxes = xs
        y = self.xp.empty(self.out_shapes[0], dtype=image.dtype)
        for k, box in enumerate(boxes):
            ay, ax = self._matrices(box, image.dtype)
            y[k] = self.xp.einsum(self.subscripts, ay, image[self._batch_index(box)], ax)
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[0]:
            return [None, None]
        boxes, dy = xs[1], dys[0]
        dx = self.xp.zeros(self.in_shapes[0], dtype=dy.dtype)
        lhs, rhs = self.subscripts.split("->")
        a, img, b = lhs.split(",")
        for k, box in enumerate(boxes):
            ay, ax = self._matrices(box, dy.dtype)
            dx[self._batch_index(box)] += self.xp.einsum(f"{a},{rhs},{b}->{img}", ay, dy[k], ax)
        return [dx, None]


class PatchCorrelation(Kernel):
    """Per shift, the channel-summed product map of x1 and shifted x2, box-summed over
    each patch (NHWC inputs, output (N, H_o, W_o, C_y, C_x))."""

    def setup(self):
        _, h, w, _ = self.in_shapes[0]
        p = self.padding
        self.pad1 = ((0, 0), (p[0], p[1]), (p[2], p[3]), (0, 0))
        self.pad2 = ((0, 0), (p[0] + self.shift[0], p[1] + self.shift[0]),
                     (p[2] + self.shift[1], p[3] + self.shift[1]), (0, 0))
        self.size = (h + p[0] + p[1], w + p[2] + p[3])
        self.out = self.out_shapes[0][1:3]

    def _shifted(self, i, j):
        oy, ox = i * self.shift_step[0], j * self.shift_step[1]
        return (slice(None), slice(oy, oy + self.size[0]), slice(ox, ox + self.size[1]))

    def _windows(self):
        for ky in range(self.patch[0]):
            for kx in range(self.patch[1]):
                yield (slice(None),
                       slice(ky, ky + (self.out[0] - 1) * self.patch_step[0] + 1,
                             self.patch_step[0]),
                       slice(kx, kx + (self.out[1] - 1) * self.patch_step[1] + 1,
                             self.patch_step[1]))

    def forward(self, xs):
        xp = self.xp
        x1, x2 = xp.pad(xs[0], self.pad1), xp.pad(xs[1], self.pad2)
        y = xp.zeros(self.out_shapes[0], dtype=x1.dtype)
        for i in range(y.shape[3]):
            for j in range(y.shape[4]):
                prod = (x1 * x2[self._shifted(i, j)]).sum(axis=3)
                for win in self._windows():
                    y[:, :, :, i, j] += prod[win]
        return (y,)

    def backward(self, xs, ys, dys, propagate_down):
        xp, dy = self.xp, dys[0]
        x1, x2 = xp.pad(xs[0], self.pad1), xp.pad(xs[1], self.pad2)
        dx1, dx2 = xp.zeros_like(x1), xp.zeros_like(x2)
        for i in range(dy.shape[3]):
            for j in range(dy.shape[4]):
                dprod = xp.zeros(x1.shape[:3], dtype=dy.dtype)
                for win in self._windows():
                    dprod[win] += dy[:, :, :, i, j]
                shifted = self._shifted(i, j)
                dx1 += dprod[..., None] * x2[shifted]
                dx2[shifted] += dprod[..., None] * x1

        def crop(g, pads):
            return g[tuple(slice(a, g.shape[k] - b) for k, (a, b) in enumerate(pads))]
        grads = (crop(dx1, self.pad1), crop(dx2, self.pad2))
        return [xp.ascontiguousarray(g) if p else None for g, p in zip(grads, propagate_down)]


KERNELS = {
    "FusedConvolution": FusedConvolution,
    "DeformableConvolution": DeformableConvolution,
    "AdaptiveSeparableConvolution": AdaptiveSeparableConvolution,
    "RoiAlign": RoiAlign,
    "PatchCorrelation": PatchCorrelation,
    "MaxPoolingBackward": MaxPoolingBackward,
}
