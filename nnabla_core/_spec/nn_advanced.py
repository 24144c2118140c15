"""Composite and sampling layers: fused_convolution, deformable_convolution,
adaptive_separable_convolution, roi_align, patch_correlation, max_pooling_backward.

- FusedConvolution is pad -> convolution (pad 0) -> batch normalization (when beta,
  gamma, mean and variance are given) -> add ``z`` -> nonlinearity. ``pad`` has one
  value per spatial axis (symmetric) or two (before, after per axis, as ``F.pad``).
- DeformableConvolution samples ``x`` bilinearly at each kernel tap shifted by
  ``offset`` (and scaled by ``mask``); ``offset``/``mask`` have x's spatial size and are
  read at the strided output positions, as nnabla does.
- PatchCorrelation is the function type behind ``F.patch_correlation``: NHWC inputs,
  output ``(N, H_o, W_o, C_y, C_x)``.
"""
from __future__ import annotations

import math

from .args import check_nonnegative, check_positive
from .base import ALL_INPUTS, Arg, FunctionSpec, Input, Needs, Output
from .neural_network import convolution, pooling, resolve_conv, resolve_pool

CATEGORY = "Neural Network Layer"
Y = (Output("y"),)
NONLINEARITIES = ("identity", "relu", "sigmoid", "tanh", "leaky_relu", "elu", "relu6")


def fused_pad_width(spec, n, pad):
    """``pad`` as F.pad's (before, after) pairs for the ``n`` spatial axes."""
    check_nonnegative(spec, "pad", pad)
    if len(pad) == n:
        return tuple(p for p in pad for _ in range(2))
    if len(pad) == 2 * n:
        return tuple(pad)
    raise spec.value_error("pad", f"{n} or {2 * n} values for {n} spatial axes", tuple(pad))


def fused_convolution(spec, x, weight, bias, beta, gamma, mean, variance, z, *, base_axis,
                      pad, stride, dilation, group, channel_last, nonlinearity_args,
                      nonlinearity, **args):
    n = len(x) - base_axis - 1
    widths = fused_pad_width(spec, n, pad)
    first = base_axis if channel_last else base_axis + 1
    padded = list(x)
    for i in range(n):
        padded[first + i] += widths[2 * i] + widths[2 * i + 1]
    (y,) = convolution(spec, tuple(padded), weight, bias, base_axis=base_axis, pad=(0,) * n,
                       stride=stride, dilation=dilation, group=group,
                       channel_last=channel_last)
    channels = y[-1 if channel_last else base_axis]
    stats = {"beta": beta, "gamma": gamma, "mean": mean, "variance": variance}
    given = [k for k, v in stats.items() if v is not None]
    if given and len(given) != 4:
        raise spec.value_error("beta", "beta, gamma, mean and variance all given or all None",
                               f"only {given}")
    if given and bias is not None:
        raise spec.value_error("bias", "None when batch normalization inputs are given",
                               f"an array of shape {tuple(bias)}",
                               why="batch normalization cancels a convolution bias")
    for name, shape in stats.items():
        if shape is not None and math.prod(shape) != channels:
            raise spec.shape_error(name, f"{channels} elements (one per output channel)",
                                   shape)
    if z is not None and tuple(z) != y:
        raise spec.shape_error("z", str(y), z, why="z is added to the convolution output")
    if nonlinearity in ("leaky_relu", "elu") and len(nonlinearity_args) != 1:
        raise spec.value_error("nonlinearity_args", f"one value (alpha) for {nonlinearity}",
                               tuple(nonlinearity_args))
    return (y,)


def deformable_convolution(spec, x, weight, offset, mask, bias, *, base_axis, pad, stride,
                           dilation, group, deformable_group, channel_last):
    if channel_last:
        raise spec.value_error("channel_last", "False", True,
                               why="deformable convolution supports channel-first only")
    n = len(x) - base_axis - 1
    if n != 2:
        raise spec.shape_error("x", "2 spatial axes after the channel axis", x)
    check_positive(spec, "deformable_group", (deformable_group,))
    (y,) = convolution(spec, x, weight, bias, base_axis=base_axis, pad=pad, stride=stride,
                       dilation=dilation, group=group, channel_last=False)
    if x[base_axis] % deformable_group:
        raise spec.value_error("deformable_group", f"a divisor of the {x[base_axis]} channels",
                               deformable_group)
    if any((o - 1) * s >= size for o, s, size in zip(y[base_axis + 1:], stride,
                                                      x[base_axis + 1:])):
        raise spec.value_error("pad", "a padding whose strided output positions lie in x",
                               tuple(pad), why="offsets are read at [ho * stride, wo * stride]")
    taps = deformable_group * weight[2] * weight[3]
    expected = tuple(x[:base_axis]) + (2 * taps,) + tuple(x[base_axis + 1:])
    if tuple(offset) != expected:
        raise spec.shape_error("offset", str(expected), offset,
                               why="2 * deformable_group * kernel taps channels, x's size")
    if mask is not None and tuple(mask) != expected[:base_axis] + (taps,) + expected[
            base_axis + 1:]:
        raise spec.shape_error("mask", str(expected[:base_axis] + (taps,)
                                           + expected[base_axis + 1:]), mask)
    return (y,)


def adaptive_separable_convolution(spec, x, vertical_kernel, horizontal_kernel):
    if len(x) != 4:
        raise spec.shape_error("x", "4 dimensions (N, C, H, W)", x)
    kv, kh = vertical_kernel, horizontal_kernel
    if len(kv) != 4 or len(kh) != 4:
        raise spec.shape_error("vertical_kernel" if len(kv) != 4 else "horizontal_kernel",
                               "4 dimensions (N, K, H_o, W_o)", kv if len(kv) != 4 else kh)
    out = (x[2] - kv[1] + 1, x[3] - kh[1] + 1)
    for name, k in (("vertical_kernel", kv), ("horizontal_kernel", kh)):
        if k[0] != x[0] or tuple(k[2:]) != out or min(out) <= 0:
            raise spec.shape_error(name, f"({x[0]}, K, {out[0]}, {out[1]})", k,
                                   why="one kernel per output pixel, output = "
                                       "(H - Kv + 1, W - Kh + 1)")
    return ((x[0], x[1]) + out,)


def resolve_roi(spec, in_shapes, args):
    """nnabla's wrapper defaults: ``sampling_ratio=-1``, ``channel_last=False``."""
    out = dict(args)
    if out["sampling_ratio"] is None:
        out["sampling_ratio"] = -1
    if out["channel_last"] is None:
        out["channel_last"] = False
    return out


def roi_align(spec, input, boxes, *, output_size, spatial_scale, sampling_ratio,
              channel_last):
    if len(input) != 4:
        raise spec.shape_error("input", "4 dimensions", input)
    if len(boxes) != 2 or boxes[1] != 5:
        raise spec.shape_error("boxes", "(K, 5): (batch index, x1, y1, x2, y2)", boxes)
    if len(output_size) != 2:
        raise spec.value_error("output_size", "2 values (height, width)", output_size)
    check_positive(spec, "output_size", output_size)
    if len(spatial_scale) != 2:
        raise spec.value_error("spatial_scale", "2 values", spatial_scale)
    channels = input[3] if channel_last else input[1]
    if channel_last:
        return ((boxes[0],) + tuple(output_size) + (channels,),)
    return ((boxes[0], channels) + tuple(output_size),)


def patch_correlation(spec, x1, x2, *, patch, shift, patch_step, shift_step, padding):
    if len(x1) != 4:
        raise spec.shape_error("x1", "4 dimensions (N, H, W, C)", x1)
    if tuple(x2) != tuple(x1):
        raise spec.shape_error("x2", str(tuple(x1)), x2, why="x1 and x2 must match")
    for name, v, size in (("patch", patch, 2), ("shift", shift, 2), ("patch_step", patch_step, 2),
                          ("shift_step", shift_step, 2), ("padding", padding, 4)):
        if len(v) != size:
            raise spec.value_error(name, f"{size} values", tuple(v))
    check_positive(spec, "patch", patch)
    check_positive(spec, "patch_step", patch_step)
    check_positive(spec, "shift_step", shift_step)
    if min(shift) < 0 or min(padding) < 0:
        raise spec.value_error("shift" if min(shift) < 0 else "padding",
                               "non-negative values", shift if min(shift) < 0 else padding)
    out = [(x1[1 + i] + padding[2 * i] + padding[2 * i + 1] - patch[i]) // patch_step[i] + 1
           for i in range(2)]
    if min(out) <= 0:
        raise spec.value_error("patch", "a patch that fits the padded input", tuple(patch))
    corr = [-(-(2 * s + 1) // t) for s, t in zip(shift, shift_step)]
    return ((x1[0], out[0], out[1], corr[0], corr[1]),)


def max_pooling_backward(spec, dy, x, **args):
    (y,) = pooling(spec, x, **args)
    if tuple(dy) != y:
        raise spec.shape_error("dy", str(y), dy, why="dy has the max pooling output's shape")
    return (tuple(x),)


CONV_ARGS = (Arg("base_axis", "int", 1), Arg("pad", "ints?", None),
             Arg("stride", "ints?", None), Arg("dilation", "ints?", None),
             Arg("group", "int", 1))

SPECS = [
    FunctionSpec(
        "FusedConvolution", "fused_convolution", CATEGORY,
        (Input("x"), Input("weight", parameter=True),
         Input("bias", optional=True, parameter=True),
         Input("beta", optional=True, parameter=True),
         Input("gamma", optional=True, parameter=True), Input("mean", optional=True),
         Input("variance", optional=True), Input("z", optional=True)),
        CONV_ARGS + (Arg("channel_last", "bool", False), Arg("decay_rate", "float", 0.9),
                     Arg("eps", "float", 1e-5), Arg("batch_stat", "bool", True),
                     Arg("nonlinearity", "str", "relu", NONLINEARITIES),
                     Arg("nonlinearity_args", "floats", []),
                     Arg("pad_mode", "str", "constant", ("constant", "reflect", "repeat")),
                     Arg("constant_value", "float", 0)),
        Y, fused_convolution, ALL_INPUTS, mutates=("mean", "variance"),
        resolve_args=resolve_conv,
        doc="pad -> convolution -> batch normalization (optional) -> + z (optional) -> "
            "nonlinearity, as one function."),
    FunctionSpec(
        "DeformableConvolution", "deformable_convolution", CATEGORY,
        (Input("x"), Input("weight", parameter=True), Input("offset"),
         Input("mask", optional=True), Input("bias", optional=True, parameter=True)),
        CONV_ARGS + (Arg("deformable_group", "int", 1), Arg("channel_last", "bool", False)),
        Y, deformable_convolution, Needs(inputs=("x", "weight", "offset", "mask")),
        resolve_args=resolve_conv,
        doc="2-D deformable convolution: y(p) = sum_k w_k x(p + p_k + offset_k) mask_k."),
    FunctionSpec(
        "AdaptiveSeparableConvolution", "adaptive_separable_convolution", CATEGORY,
        (Input("x"), Input("vertical_kernel"), Input("horizontal_kernel")), (), Y,
        adaptive_separable_convolution, ALL_INPUTS,
        doc="y[n, c, h, w] = sum_{j, i} kv[n, j, h, w] kh[n, i, h, w] x[n, c, h + j, w + i]."),
    FunctionSpec(
        "RoiAlign", "roi_align", CATEGORY, (Input("input"), Input("boxes")),
        (Arg("output_size", "ints"), Arg("spatial_scale", "floats", (1.0, 1.0)),
         Arg("sampling_ratio", "int?", None), Arg("channel_last", "bool?", None)),
        Y, roi_align, Needs(inputs=("boxes",)), resolve_args=resolve_roi,
        doc="Bilinearly sampled, averaged features of each box (b, x1, y1, x2, y2) on an "
            "output_size grid (Mask R-CNN's RoIAlign)."),
    FunctionSpec(
        "PatchCorrelation", "patch_correlation", CATEGORY, (Input("x1"), Input("x2")),
        (Arg("patch", "ints", (1, 1)), Arg("shift", "ints", (0, 0)),
         Arg("patch_step", "ints", (1, 1)), Arg("shift_step", "ints", (1, 1)),
         Arg("padding", "ints", (0, 0, 0, 0))),
        Y, patch_correlation, ALL_INPUTS,
        doc="Correlation of x1's patches with shifted patches of x2 (NHWC inputs; output "
            "(N, H_o, W_o, C_y, C_x))."),
    FunctionSpec(
        "MaxPoolingBackward", "max_pooling_backward", CATEGORY, (Input("dy"), Input("x")),
        (Arg("kernel", "ints"), Arg("stride", "ints?", None),
         Arg("ignore_border", "bool", True), Arg("pad", "ints?", None),
         Arg("channel_last", "bool", False)),
        (Output("dx"),), max_pooling_backward, Needs(inputs=("x",)),
        resolve_args=resolve_pool,
        doc="The input gradient of max pooling: dy routed to each window's maximum of x."),
]
