"""Cases of the neural network layers, with direct-definition numpy references.

The references are sums written from the definitions, in float64 einsum (a loop over
kernel taps or over output windows). The CPU kernels unfold with im2col (and, in the
generic column code, also walk the kernel taps), so the tap decomposition is shared: the
convolutions' independent checks are the float64 central differences of backward and the
small direct per-output sums in ``tests/functions/test_kernels.py``.
"""
import itertools
import math

import numpy as np
from .case import Case, Fixed, Int, Normal

# ---------------------------------------------------------------- references


def _cdiv(a, b):
    return int(a / b)  # nnabla divides sizes like C++: toward zero


def ref_affine(x, w, b=None, base_axis=1):
    m = math.prod(x.shape[:base_axis])
    y = x.reshape(m, -1) @ w.reshape(w.shape[0], -1)
    y = y.reshape(x.shape[:base_axis] + w.shape[1:])
    return y if b is None else y + b


def _spatial_defaults(n, pad, stride, dilation):
    return (tuple(pad or (0,) * n), tuple(stride or (1,) * n), tuple(dilation or (1,) * n))


def _to_first(a, channel_last, base_axis):
    return np.moveaxis(a, -1, base_axis) if channel_last else a


def _taps(out, k, s, d):
    return tuple(slice(ki * di, ki * di + (o - 1) * si + 1, si)
                 for o, ki, si, di in zip(out, k, s, d))


def ref_conv(x, w, b=None, base_axis=1, pad=None, stride=None, dilation=None, group=1,
             channel_last=False):
    """y[n, g, o, p] = sum_{c, k} w[g, o, c, k] * xpad[n, g, c, p * s + k * d]."""
    x, w = _to_first(x, channel_last, base_axis), _to_first(w, channel_last, 1)
    n = x.ndim - base_axis - 1
    pad, stride, dilation = _spatial_defaults(n, pad, stride, dilation)
    batch, spatial = x.shape[:base_axis], x.shape[base_axis + 1:]
    x = x.reshape((-1, group, x.shape[base_axis] // group) + spatial)
    kernel = w.shape[2:]
    out = [_cdiv(i + 2 * p - d * (k - 1) - 1, s) + 1
           for i, p, d, k, s in zip(spatial, pad, dilation, kernel, stride)]
    extra = [max(0, (o - 1) * s + (k - 1) * d + 1 - i - p)
             for o, s, k, d, i, p in zip(out, stride, kernel, dilation, spatial, pad)]
    xpad = np.pad(x, [(0, 0)] * 3 + [(p, p + e) for p, e in zip(pad, extra)])
    wg = w.reshape((group, -1) + w.shape[1:])
    y = np.zeros((x.shape[0], group, wg.shape[1]) + tuple(out))
    for k in itertools.product(*map(range, kernel)):
        patch = xpad[(slice(None),) * 3 + _taps(out, k, stride, dilation)]
        y += np.einsum("ngc...,goc->ngo...", patch, wg[(Ellipsis,) + k])
    y = y.reshape(batch + (-1,) + tuple(out))
    if b is not None:
        y += b.reshape((-1,) + (1,) * n)
    return np.moveaxis(y, base_axis, -1) if channel_last else y


def ref_deconv(x, w, b=None, base_axis=1, pad=None, stride=None, dilation=None, group=1,
               channel_last=False, output_padding=None):
    """y[n, g, o, p * s - pad + k * d] += x[n, g, c, p] * w[g, c, o, k]."""
    x, w = _to_first(x, channel_last, base_axis), _to_first(w, channel_last, 1)
    n = x.ndim - base_axis - 1
    pad, stride, dilation = _spatial_defaults(n, pad, stride, dilation)
    output_padding = tuple(output_padding or (0,) * n)
    batch, spatial = x.shape[:base_axis], x.shape[base_axis + 1:]
    x = x.reshape((-1, group, x.shape[base_axis] // group) + spatial)
    kernel = w.shape[2:]
    out = [s * (i - 1) - 2 * p + d * (k - 1) + 1 + op for s, i, p, d, k, op in
           zip(stride, spatial, pad, dilation, kernel, output_padding)]
    full = [max((i - 1) * s + (k - 1) * d + 1, p + o) for i, s, k, d, p, o in
            zip(spatial, stride, kernel, dilation, pad, out)]
    wg = w.reshape((group, -1) + w.shape[1:])
    ypad = np.zeros((x.shape[0], group, w.shape[1]) + tuple(full))
    for k in itertools.product(*map(range, kernel)):
        target = (slice(None),) * 3 + _taps(spatial, k, stride, dilation)
        ypad[target] += np.einsum("ngc...,gco->ngo...", x, wg[(Ellipsis,) + k])
    y = ypad[(slice(None),) * 3 + tuple(slice(p, p + o) for p, o in zip(pad, out))]
    y = y.reshape(batch + (-1,) + tuple(out))
    if b is not None:
        y = y + b.reshape((-1,) + (1,) * n)
    return np.moveaxis(y, base_axis, -1) if channel_last else y


def ref_depthwise_conv(x, w, b=None, base_axis=1, pad=None, stride=None, dilation=None,
                       multiplier=1):
    """Output channel c * multiplier + j filters input channel c with w[c * m + j]."""
    c = x.shape[base_axis]
    return ref_conv(x, w.reshape((c * multiplier, 1) + w.shape[1:]), b, base_axis, pad,
                    stride, dilation, group=c)


def ref_depthwise_deconv(x, w, b=None, base_axis=1, pad=None, stride=None, dilation=None,
                         divisor=1):
    """Input channels c * divisor + i all feed output channel c."""
    c = x.shape[base_axis]
    return ref_deconv(x, w.reshape((c, 1) + w.shape[1:]), b, base_axis, pad, stride,
                      dilation, group=c // divisor)


def _pool_windows(spatial, kernel, stride, pad, ignore_border):
    """Per output position: (clipped window slices, window size counting padding)."""
    out = [(_cdiv(i + 2 * p - k, s) if ignore_border else _cdiv(i + p - 1, s)) + 1
           for i, k, s, p in zip(spatial, kernel, stride, pad)]
    for o in itertools.product(*map(range, out)):
        starts = [oi * s - p for oi, s, p in zip(o, stride, pad)]
        ends = [min(st + k, i + p) for st, k, i, p in zip(starts, kernel, spatial, pad)]
        padded = math.prod(e - st for st, e in zip(starts, ends))
        clipped = tuple(slice(max(st, 0), min(e, i)) for st, e, i in zip(starts, ends, spatial))
        yield o, out, clipped, padded


def ref_pool(mode, x, kernel, stride=None, ignore_border=True, pad=None, channel_last=False,
             including_pad=True):
    n = len(kernel)
    stride, pad = tuple(stride or kernel), tuple(pad or (0,) * n)
    if channel_last:
        x = np.moveaxis(x, -1, x.ndim - n - 1)
    lead, spatial = x.shape[:-n], x.shape[-n:]
    y = None
    for o, out, window, padded in _pool_windows(spatial, kernel, stride, pad, ignore_border):
        if y is None:
            y = np.zeros(lead + tuple(out))
        v = x[(Ellipsis,) + window].reshape(lead + (-1,))
        if mode == "max":
            y[(Ellipsis,) + o] = v.max(axis=-1)
        elif mode == "sum":
            y[(Ellipsis,) + o] = v.sum(axis=-1)
        else:
            y[(Ellipsis,) + o] = v.sum(axis=-1) / (padded if including_pad else v.shape[-1])
    return np.moveaxis(y, x.ndim - n - 1, -1) if channel_last else y


def ref_unpool(x, kernel, channel_last=False):
    first = x.ndim - len(kernel) - (1 if channel_last else 0)
    for i, k in enumerate(kernel):
        x = np.repeat(x, k, axis=first + i)
    return x


def distinct(shape, seed=0, step=0.05):
    """Well-separated values (no ties within 2*eps) so max pooling is differentiable."""
    values = np.random.RandomState(seed).permutation(math.prod(shape)) - math.prod(shape) / 2
    return Fixed((values * step).reshape(shape))


# --------------------------------------------------------------------- cases
def _conv(name, ref, x, w, b, args, case_id, **kw):
    inputs = [Normal(x), Normal(w), Normal(b) if b else None]
    return Case(name, inputs, args, ref=ref, id=case_id, **kw)


def _pool(name, mode, x, args, case_id, **kw):
    gen = distinct(x) if mode == "max" else Normal(x)
    return Case(name, [gen], args, ref=lambda x, **a: ref_pool(mode, x, **a), id=case_id, **kw)


CONVOLUTION = [
    _conv("Convolution", ref_conv, (2, 3, 5, 5), (4, 3, 3, 3), (4,), {}, "2d"),
    _conv("Convolution", ref_conv, (2, 4, 6, 5), (6, 2, 3, 2), (6,),
          {"pad": (1, 2), "stride": (2, 1), "dilation": (1, 2), "group": 2}, "2d-group"),
    _conv("Convolution", ref_conv, (2, 3, 7), (4, 3, 3), None,
          {"pad": (1,), "stride": (2,)}, "1d-nobias"),
    _conv("Convolution", ref_conv, (1, 2, 4, 3, 4), (2, 2, 2, 2, 3), (2,),
          {"pad": (1, 0, 1), "stride": (1, 2, 1)}, "3d"),
    _conv("Convolution", ref_conv, (2, 5, 4, 4), (4, 3, 3, 2), (4,),
          {"pad": (1, 1), "group": 2, "channel_last": True}, "channel-last-group"),
    _conv("Convolution", ref_conv, (2, 2, 3, 6, 6), (3, 3, 2, 2), (3,),
          {"base_axis": 2, "stride": (2, 2)}, "base-axis-2"),
    _conv("Convolution", ref_conv, (2, 3, 2), (2, 3, 3), None,
          {"stride": (2,)}, "window-past-edge"),
]

DECONVOLUTION = [
    _conv("Deconvolution", ref_deconv, (2, 4, 3, 3), (4, 3, 3, 3), (3,), {}, "2d"),
    _conv("Deconvolution", ref_deconv, (2, 4, 3, 4), (4, 2, 3, 2), (4,),
          {"pad": (1, 0), "stride": (2, 2), "dilation": (1, 2), "group": 2,
           "output_padding": (1, 0)}, "2d-group-outpad"),
    _conv("Deconvolution", ref_deconv, (2, 3, 4), (3, 2, 3), None,
          {"stride": (2,), "pad": (1,)}, "1d-nobias"),
    _conv("Deconvolution", ref_deconv, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), (2,),
          {"stride": (2, 1, 2)}, "3d"),
    _conv("Deconvolution", ref_deconv, (2, 3, 3, 4), (4, 2, 2, 1), (2,),
          {"stride": (2, 2), "pad": (1, 0), "group": 2, "channel_last": True},
          "channel-last-group"),
]

DEPTHWISE = [
    _conv("DepthwiseConvolution", ref_depthwise_conv, (2, 3, 5, 5), (3, 3, 3), (3,),
          {"pad": (1, 1)}, "2d"),
    _conv("DepthwiseConvolution", ref_depthwise_conv, (2, 2, 7), (6, 3), (6,),
          {"stride": (2,), "dilation": (2,), "multiplier": 3}, "1d-multiplier"),
    _conv("DepthwiseDeconvolution", ref_depthwise_deconv, (2, 3, 3, 3), (3, 3, 3), (3,),
          {"pad": (1, 1), "stride": (2, 2)}, "2d"),
    _conv("DepthwiseDeconvolution", ref_depthwise_deconv, (2, 4, 4), (4, 3), (2,),
          {"divisor": 2, "dilation": (2,)}, "1d-divisor"),
]

POOLING = [
    _pool("MaxPooling", "max", (2, 3, 4, 6), {"kernel": (2, 2)}, "2d"),
    _pool("MaxPooling", "max", (2, 3, 5, 6), {"kernel": (3, 2), "stride": (2, 1),
                                              "pad": (1, 1)}, "2d-pad"),
    _pool("MaxPooling", "max", (2, 5, 7), {"kernel": (2, 3), "stride": (2, 2),
                                           "ignore_border": False, "pad": (1, 0)},
          "ignore-border-false"),
    _pool("MaxPooling", "max", (2, 4, 6), {"kernel": (2, 2), "stride": (2, 1),
                                           "pad": (1, 0)}, "no-batch"),
    _pool("MaxPooling", "max", (2, 3, 4, 5), {"kernel": (2, 2, 2), "stride": (1, 2, 2),
                                              "pad": (0, 1, 1)}, "3d"),
    _pool("MaxPooling", "max", (2, 3, 7), {"kernel": (3,), "stride": (2,)}, "1d"),
    _pool("MaxPooling", "max", (2, 5, 4, 3), {"kernel": (2, 2), "stride": (2, 1),
                                              "channel_last": True, "ignore_border": False},
          "channel-last"),
    _pool("AveragePooling", "average", (2, 3, 4, 6), {"kernel": (2, 3)}, "2d"),
    _pool("AveragePooling", "average", (2, 3, 5, 6), {"kernel": (3, 3), "stride": (2, 2),
                                                      "pad": (1, 1)}, "pad-included"),
    _pool("AveragePooling", "average", (2, 3, 5, 6),
          {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "including_pad": False},
          "pad-excluded"),
    _pool("AveragePooling", "average", (2, 5, 7), {"kernel": (2, 3), "stride": (2, 2),
                                                   "ignore_border": False, "pad": (1, 1)},
          "ignore-border-false"),
    _pool("AveragePooling", "average", (2, 4, 5, 3),
          {"kernel": (2, 2), "pad": (1, 1), "channel_last": True, "including_pad": False},
          "channel-last"),
    _pool("AveragePooling", "average", (1, 2, 4, 4, 3), {"kernel": (2, 2, 3)}, "3d"),
    _pool("SumPooling", "sum", (2, 3, 4, 6), {"kernel": (2, 2)}, "2d"),
    _pool("SumPooling", "sum", (2, 3, 5, 5), {"kernel": (3, 2), "stride": (1, 2),
                                              "pad": (1, 0), "ignore_border": False},
          "pad-ignore-border-false"),
    _pool("SumPooling", "sum", (2, 6, 3), {"kernel": (2,), "channel_last": True}, "1d-cl"),
]

CASES = [
    Case("Affine", [Normal((2, 3, 4)), Normal((12, 5)), Normal((5,))], ref=ref_affine),
    Case("Affine", [Normal((2, 3, 4)), Normal((4, 2, 3)), None], {"base_axis": 2},
         ref=ref_affine, id="base-axis-2-nobias"),
    *CONVOLUTION, *DECONVOLUTION, *DEPTHWISE, *POOLING,
    Case("GlobalAveragePooling", [Normal((2, 3, 4, 5))], ref=lambda x: x.mean(
        axis=(2, 3), keepdims=True)),
    Case("Unpooling", [Normal((2, 3, 2, 3))], {"kernel": (2, 3)}, ref=ref_unpool),
    Case("Unpooling", [Normal((2, 2, 3, 2))], {"kernel": (3, 2), "channel_last": True},
         ref=ref_unpool, id="channel-last"),
    Case("Unpooling", [Normal((2, 3, 4))], {"kernel": (2,)}, ref=ref_unpool, id="1d"),
    Case("Embed", [Int((2, 3), 0, 5), Normal((5, 4))], ref=lambda x0, w: w[x0],
         grad_inputs=(1,)),
    Case("Embed", [Int((4,), 0, 3), Normal((3, 2, 2))], ref=lambda x0, w: w[x0],
         grad_inputs=(1,), id="3d-weight"),
]
