"""Cases of the composite and sampling layers, with direct numpy references.

References loop over boxes, shifts, taps or output pixels as the functions are
defined (bilinear sampling written out per point), not the kernels' formulations.
"""
import itertools

import numpy as np
from .case import Case, Fixed, Normal, Positive, Uniform
from .cases_neural_network import ref_conv

# ------------------------------------------------------------ fused convolution
ACTS = {"identity": lambda h, a: h, "relu": lambda h, a: np.maximum(h, 0),
        "sigmoid": lambda h, a: 1 / (1 + np.exp(-h)), "tanh": lambda h, a: np.tanh(h),
        "leaky_relu": lambda h, a: np.where(h > 0, h, a[0] * h),
        "elu": lambda h, a: np.where(h > 0, h, a[0] * (np.exp(h) - 1)),
        "relu6": lambda h, a: np.clip(h, 0, 6)}


def ref_fused_conv(x, w, b=None, beta=None, gamma=None, mean=None, variance=None, z=None,
                   base_axis=1, pad=None, stride=None, dilation=None, group=1,
                   channel_last=False, decay_rate=0.9, eps=1e-5, batch_stat=True,
                   nonlinearity="relu", nonlinearity_args=(), pad_mode="constant",
                   constant_value=0):
    n = x.ndim - base_axis - 1
    pad = pad or (0,) * n
    pairs = [(p, p) for p in pad] if len(pad) == n else list(zip(pad[::2], pad[1::2]))
    widths = [(0, 0)] * (base_axis + 1) + pairs
    mode = {"constant": "constant", "reflect": "reflect", "repeat": "edge"}[pad_mode]
    extra = {"constant_values": constant_value} if mode == "constant" else {}
    h = ref_conv(np.pad(x, widths, mode=mode, **extra), w, b, base_axis, None, stride,
                 dilation, group)
    if beta is not None:
        axes = tuple(a for a in range(h.ndim) if a != base_axis)
        shape = [1] * h.ndim
        shape[base_axis] = -1
        if batch_stat:
            m, v = h.mean(axis=axes, keepdims=True), h.var(axis=axes, keepdims=True)
        else:
            m, v = mean.reshape(shape), variance.reshape(shape)
        h = (h - m) / np.sqrt(v + eps) * gamma.reshape(shape) + beta.reshape(shape)
    if z is not None:
        h = h + z
    return ACTS[nonlinearity](h, nonlinearity_args)


X, W = Normal((2, 4, 5, 5)), Normal((6, 2, 3, 3), 0.5)
STAT = [Normal((1, 6, 1, 1)), Positive((1, 6, 1, 1)), Normal((1, 6, 1, 1)),
        Positive((1, 6, 1, 1))]
Z = Normal((2, 6, 3, 3))


def _fused(inputs, args, ident, grad_inputs=None):
    base = {"pad": (1, 1), "stride": (2, 2), "group": 2}
    # elu/relu-like kinks sit among these pre-activations: no finite-difference 2nd order
    smooth = args.get("nonlinearity") in ("tanh", "sigmoid", "identity")
    return Case("FusedConvolution", inputs, {**base, **args}, ref=ref_fused_conv,
                grad_inputs=grad_inputs, id=ident, atol=1e-4, grad_atol=5e-3,
                second_order=smooth)


FUSED = [
    _fused([X, W, Normal((6,)), None, None, None, None, None], {"nonlinearity": "tanh"},
           "bias-tanh"),
    _fused([X, W, None, *STAT, Z], {"nonlinearity": "sigmoid"}, "bn-z-sigmoid",
           grad_inputs=(0, 1, 3, 4, 7)),
    _fused([X, W, None, *STAT, None], {"batch_stat": False, "nonlinearity": "elu",
                                       "nonlinearity_args": [0.2]}, "bn-inference-elu",
           grad_inputs=(0, 1, 3, 4, 5, 6)),
    _fused([X, W, Normal((6,)), None, None, None, None, Z],
           {"pad": (2, 1, 2, 1), "pad_mode": "reflect", "nonlinearity": "leaky_relu",
            "nonlinearity_args": [0.1]}, "reflect-z-leaky"),
    _fused([X, W, None, None, None, None, None, None],
           {"pad_mode": "repeat", "nonlinearity": "identity"}, "repeat"),
    _fused([X, W, None, None, None, None, None, None],
           {"constant_value": 1.0, "nonlinearity": "tanh"}, "constant1"),
]


# ---------------------------------------------------------------- max pooling grad
def ref_max_pooling_backward(dy, x, kernel, stride=None, ignore_border=True, pad=None,
                             channel_last=False):
    """2-D, channel-first: each dy value goes to the first maximum of its window."""
    stride, pad = stride or kernel, pad or (0, 0)
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad], constant_values=-np.inf)
    dx = np.zeros_like(xpad)
    for n, c, i, j in itertools.product(*map(range, dy.shape)):
        win = xpad[n, c, i * stride[0]:i * stride[0] + kernel[0],
                   j * stride[1]:j * stride[1] + kernel[1]]
        a, b = np.unravel_index(np.argmax(win), win.shape)
        dx[n, c, i * stride[0] + a, j * stride[1] + b] += dy[n, c, i, j]
    return dx[:, :, pad[0]:pad[0] + x.shape[2], pad[1]:pad[1] + x.shape[3]]


MAXPOOL_BACKWARD = [
    Case("MaxPoolingBackward", [Normal((2, 3, 2, 2)), Normal((2, 3, 4, 5))],
         {"kernel": (2, 2)}, ref=ref_max_pooling_backward, grad_inputs=(0,)),
    Case("MaxPoolingBackward", [Normal((1, 2, 3, 3)), Normal((1, 2, 5, 5))],
         {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}, ref=ref_max_pooling_backward,
         grad_inputs=(0,), id="pad-stride"),
]


# ------------------------------------------------------------ adaptive separable
def ref_adaptive_sep(x, kv, kh):
    ho, wo = kv.shape[2:]
    y = np.zeros(x.shape[:2] + (ho, wo))
    for n, h, w in itertools.product(range(x.shape[0]), range(ho), range(wo)):
        kernel = np.outer(kv[n, :, h, w], kh[n, :, h, w])
        y[n, :, h, w] = (x[n, :, h:h + kv.shape[1], w:w + kh.shape[1]] * kernel).sum((1, 2))
    return y


ADAPTIVE = [
    Case("AdaptiveSeparableConvolution",
         [Normal((2, 3, 6, 5)), Normal((2, 3, 4, 4)), Normal((2, 2, 4, 4))],
         ref=ref_adaptive_sep),
]


# ------------------------------------------------------------------- roi align
def _bilinear(img, y, x):
    """img (C, H, W) at one point with RoIAlign's rule: zero beyond [-1, size]."""
    height, width = img.shape[1:]
    if y < -1 or y > height or x < -1 or x > width:
        return np.zeros(img.shape[0])
    y, x = min(max(y, 0), height - 1), min(max(x, 0), width - 1)
    y0, x0 = int(np.floor(y)), int(np.floor(x))
    y1, x1 = min(y0 + 1, height - 1), min(x0 + 1, width - 1)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * img[:, y0, x0] + (1 - ly) * lx * img[:, y0, x1]
            + ly * (1 - lx) * img[:, y1, x0] + ly * lx * img[:, y1, x1])


def ref_roi_align(image, boxes, output_size, spatial_scale=(1.0, 1.0), sampling_ratio=None,
                  channel_last=None):
    if channel_last:
        image = image.transpose(0, 3, 1, 2)
    oh, ow = output_size
    out = np.zeros((len(boxes), image.shape[1], oh, ow))
    for k, box in enumerate(boxes):
        x1, x2 = box[1] * spatial_scale[1] - 0.5, box[3] * spatial_scale[1] - 0.5
        y1, y2 = box[2] * spatial_scale[0] - 0.5, box[4] * spatial_scale[0] - 0.5
        ratio = sampling_ratio if sampling_ratio and sampling_ratio > 0 else None
        ry = ratio or int(np.ceil(max(y2 - y1, 1) / oh))
        rx = ratio or int(np.ceil(max(x2 - x1, 1) / ow))
        bh, bw = (y2 - y1) / (oh * ry), (x2 - x1) / (ow * rx)
        for i, j in itertools.product(range(oh), range(ow)):
            acc = 0
            for a, b in itertools.product(range(ry), range(rx)):
                acc = acc + _bilinear(image[int(box[0])], y1 + (i * ry + a + 0.5) * bh,
                                      x1 + (j * rx + b + 0.5) * bw)
            out[k, :, i, j] = acc / (ry * rx)
    return out.transpose(0, 2, 3, 1) if channel_last else out


BOXES = Fixed([[0, 1.2, 2.3, 8.4, 7.1], [1, -2.6, 0.4, 11.3, 8.2], [1, 2.5, 3.5, 4.2, 4.9]])
HALF_BOXES = dict(half_rtol=2e-2, why_loose="under half the boxes are rounded to float16 (8.4 -> "
                  "8.398, 11.3 -> 11.297): sampling points move by up to 4e-3 pixel, and the "
                  "outputs by the image's slope times that")
ROI = [
    Case("RoiAlign", [Normal((2, 3, 9, 10)), BOXES], {"output_size": (3, 4)},
         ref=ref_roi_align, grad_inputs=(0,), **HALF_BOXES),
    Case("RoiAlign", [Normal((2, 3, 9, 10)), BOXES],
         {"output_size": (2, 5), "spatial_scale": (0.7, 1.5), "sampling_ratio": 2},
         ref=ref_roi_align, grad_inputs=(0,), id="scale-ratio2"),
    Case("RoiAlign", [Normal((2, 9, 10, 3)), BOXES],
         {"output_size": (4, 3), "channel_last": True, "sampling_ratio": 1},
         ref=ref_roi_align, grad_inputs=(0,), id="channel-last", **HALF_BOXES),
]


# ------------------------------------------------------------ patch correlation
def ref_patch_correlation(x1, x2, patch=(1, 1), shift=(0, 0), patch_step=(1, 1),
                          shift_step=(1, 1), padding=(0, 0, 0, 0)):
    x1 = np.pad(x1, [(0, 0), padding[:2], padding[2:], (0, 0)])
    x2 = np.pad(x2, [(0, 0), padding[:2], padding[2:], (0, 0)])
    oh = (x1.shape[1] - patch[0]) // patch_step[0] + 1
    ow = (x1.shape[2] - patch[1]) // patch_step[1] + 1
    sy = range(-shift[0], shift[0] + 1, shift_step[0])
    sx = range(-shift[1], shift[1] + 1, shift_step[1])
    out = np.zeros((x1.shape[0], oh, ow, len(sy), len(sx)))
    for i, j in itertools.product(range(oh), range(ow)):
        y, x = i * patch_step[0], j * patch_step[1]
        p1 = x1[:, y:y + patch[0], x:x + patch[1]]
        for (a, dy), (b, dx) in itertools.product(enumerate(sy), enumerate(sx)):
            for u, v in itertools.product(range(patch[0]), range(patch[1])):
                yy, xx = y + u + dy, x + v + dx
                if 0 <= yy < x2.shape[1] and 0 <= xx < x2.shape[2]:
                    out[:, i, j, a, b] += (p1[:, u, v] * x2[:, yy, xx]).sum(-1)
    return out


PC_X = [Normal((2, 5, 6, 2)), Normal((2, 5, 6, 2))]
PATCH = [
    Case("PatchCorrelation", PC_X, {"patch": (1, 1), "shift": (2, 2), "shift_step": (2, 2)},
         ref=ref_patch_correlation, id="shift"),
    Case("PatchCorrelation", PC_X, {"patch": (3, 3), "padding": (1, 2, 2, 1)},
         ref=ref_patch_correlation, id="padding"),
    Case("PatchCorrelation", PC_X, {"patch": (2, 3), "shift": (1, 1), "patch_step": (2, 3)},
         ref=ref_patch_correlation, id="steps"),
]


# ------------------------------------------------------- deformable convolution
def ref_deformable(x, w, offset, mask=None, b=None, base_axis=1, pad=None, stride=None,
                   dilation=None, group=1, deformable_group=1, channel_last=False):
    """Per output pixel and tap: bilinear sample (zeros outside), times mask, times w."""
    pad, stride, dilation = pad or (0, 0), stride or (1, 1), dilation or (1, 1)
    batch, channels, height, width = x.shape
    out_c, cg, kh, kw = w.shape
    ho = (height + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (width + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    per_dg = channels // deformable_group
    cols = np.zeros((batch, channels, kh * kw, ho, wo))
    for n, c, k, i, j in itertools.product(range(batch), range(channels), range(kh * kw),
                                           range(ho), range(wo)):
        g, (m, v) = c // per_dg, divmod(k, kw)
        oy, ox = i * stride[0], j * stride[1]
        py = oy - pad[0] + m * dilation[0] + offset[n, 2 * (g * kh * kw + k), oy, ox]
        px = ox - pad[1] + v * dilation[1] + offset[n, 2 * (g * kh * kw + k) + 1, oy, ox]
        val = 0.0
        for yy, xx in itertools.product((np.floor(py), np.floor(py) + 1),
                                        (np.floor(px), np.floor(px) + 1)):
            if 0 <= yy < height and 0 <= xx < width:
                val += (1 - abs(py - yy)) * (1 - abs(px - xx)) * x[n, c, int(yy), int(xx)]
        scale = 1.0 if mask is None else mask[n, g * kh * kw + k, oy, ox]
        cols[n, c, k, i, j] = val * scale
    y = np.zeros((batch, out_c, ho, wo))
    per_group = out_c // group
    for o in range(out_c):
        g = o // per_group
        y[:, o] = np.einsum("nckij,ck->nij", cols[:, g * cg:(g + 1) * cg], w[o].reshape(cg, -1))
    return y if b is None else y + b.reshape(-1, 1, 1)


def _offsets(shape):
    """Offsets away from integers, where bilinear sampling has kinks."""
    rng = np.random.RandomState(7)
    off = rng.uniform(-1.9, 1.9, shape)
    off += (np.abs(off - np.round(off)) < 0.1) * 0.5
    return Fixed(off)


DEFORM = [
    Case("DeformableConvolution",
         [Normal((2, 4, 6, 6)), Normal((4, 2, 3, 2)), _offsets((2, 24, 6, 6)),
          Uniform((2, 12, 6, 6), 0, 1), Normal((4,))],
         {"group": 2, "deformable_group": 2}, ref=ref_deformable, atol=1e-4, id="groups"),
    Case("DeformableConvolution",
         [Normal((1, 2, 5, 7)), Normal((2, 2, 3, 3)), _offsets((1, 18, 5, 7)), None, None],
         {"pad": (1, 1), "stride": (1, 2), "dilation": (2, 1)}, ref=ref_deformable,
         atol=1e-4, id="strided-no-mask"),
]

CASES = FUSED + MAXPOOL_BACKWARD + ADAPTIVE + ROI + PATCH + DEFORM
