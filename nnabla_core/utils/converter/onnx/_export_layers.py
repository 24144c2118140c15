"""NNP layers, array manipulation, reductions and normalization as ONNX nodes (see
:mod:`._export_ops` for the exporter convention)."""
from __future__ import annotations

import math

import numpy as np

from ._export_ops import _refuse, exporter


# -- layers ------------------------------------------------------------------------------
@exporter("Affine")
def _affine(g, f, args, ins, outs):
    x_shape, w_shape = g.shapes[ins[0]], g.shapes[ins[1]]
    base = args["base_axis"]
    rows, inner = math.prod(x_shape[:base]), math.prod(x_shape[base:])
    x = g.reshape(ins[0], [rows, inner])
    w = g.reshape(ins[1], [w_shape[0], math.prod(w_shape[1:])])
    gemm_in = [x, w] + ([g.reshape(ins[2], [math.prod(w_shape[1:])])] if len(ins) > 2 else [])
    y = g.add("Gemm", gemm_in)
    g.reshape(y, list(g.shapes[outs[0]]), outs[0])


def _spatial(args, kernel_rank, key, default):
    value = list(args.get(key) or ())
    return value if value else [default] * kernel_rank


def _folded_input(g, f, args, x):
    """Inputs with ``base_axis`` above 1 are folded to one batch axis (restored after)."""
    base = args.get("base_axis", 1)
    if args.get("channel_last"):
        _refuse(f, "channel_last=True is not exported")
    shape = g.shapes[x]
    if base == 1:
        return x
    return g.reshape(x, [math.prod(shape[:base])] + list(shape[base:]))


def _unfold_output(g, args, y, out):
    if args.get("base_axis", 1) == 1:
        return
    g.reshape(y, list(g.shapes[out]), out)


def _conv_attrs(args, rank):
    pad = _spatial(args, rank, "pad", 0)
    return dict(pads=pad + pad, strides=_spatial(args, rank, "stride", 1),
                dilations=_spatial(args, rank, "dilation", 1))


@exporter("Convolution")
def _convolution(g, f, args, ins, outs):
    x = _folded_input(g, f, args, ins[0])
    w_shape = g.shapes[ins[1]]
    rank = len(w_shape) - 2
    direct = args.get("base_axis", 1) == 1
    y = g.add("Conv", [x] + ins[1:], outs if direct else None, kernel_shape=list(w_shape[2:]),
              group=int(args["group"]), **_conv_attrs(args, rank))
    if not direct:
        _unfold_output(g, args, y, outs[0])


@exporter("DepthwiseConvolution")
def _depthwise(g, f, args, ins, outs):
    x = _folded_input(g, f, args, ins[0])
    w_shape = g.shapes[ins[1]]
    channels = g.shapes[x][1]
    w = g.reshape(ins[1], [w_shape[0], 1] + list(w_shape[1:]))
    direct = args.get("base_axis", 1) == 1
    y = g.add("Conv", [x, w] + ins[2:], outs if direct else None,
              kernel_shape=list(w_shape[1:]), group=int(channels),
              **_conv_attrs(args, len(w_shape) - 1))
    if not direct:
        _unfold_output(g, args, y, outs[0])


@exporter("Deconvolution")
def _deconvolution(g, f, args, ins, outs):
    x = _folded_input(g, f, args, ins[0])
    w_shape = g.shapes[ins[1]]
    rank = len(w_shape) - 2
    attrs = _conv_attrs(args, rank)
    attrs["output_padding"] = _spatial(args, rank, "output_padding", 0)
    direct = args.get("base_axis", 1) == 1
    y = g.add("ConvTranspose", [x] + ins[1:], outs if direct else None,
              kernel_shape=list(w_shape[2:]), group=int(args["group"]), **attrs)
    if not direct:
        _unfold_output(g, args, y, outs[0])


def _pool_attrs(f, args, g, x):
    if args.get("channel_last"):
        _refuse(f, "channel_last=True is not exported")
    if not args.get("ignore_border", True):
        _refuse(f, "ignore_border=False is not exported")
    kernel = list(args["kernel"])
    rank = len(kernel)
    if len(g.shapes[x]) != rank + 2:
        _refuse(f, f"pooling over {rank} axes of a rank-{len(g.shapes[x])} input is not "
                   f"exported (ONNX pools all axes after the channel)")
    pad = _spatial(args, rank, "pad", 0)
    return dict(kernel_shape=kernel, strides=list(args.get("stride") or kernel),
                pads=pad + pad)


@exporter("MaxPooling")
def _max_pooling(g, f, args, ins, outs):
    g.add("MaxPool", ins, outs, **_pool_attrs(f, args, g, ins[0]))


@exporter("AveragePooling")
def _average_pooling(g, f, args, ins, outs):
    g.add("AveragePool", ins, outs, count_include_pad=int(bool(args["including_pad"])),
          **_pool_attrs(f, args, g, ins[0]))


@exporter("SumPooling")
def _sum_pooling(g, f, args, ins, outs):
    attrs = _pool_attrs(f, args, g, ins[0])
    mean = g.add("AveragePool", ins, count_include_pad=1, **attrs)
    g.add("Mul", [mean, g.const("size", float(math.prod(attrs["kernel_shape"])))], outs)


@exporter("GlobalAveragePooling")
def _global_average_pooling(g, f, args, ins, outs):
    g.add("GlobalAveragePool", ins, outs)


@exporter("BatchNormalization")
def _batch_normalization(g, f, args, ins, outs):
    if list(args["axes"]) != [1]:
        _refuse(f, f"axes={list(args['axes'])}; only the channel axis 1 is exported")
    if args["batch_stat"]:
        _refuse(f, "batch_stat=True (batch statistics) is not exported; export the "
                   "inference network (batch_stat=False)")
    if args["no_scale"] or args["no_bias"] or len(ins) != 5:
        _refuse(f, "no_scale/no_bias is not exported")
    channels = g.shapes[ins[0]][1]
    beta, gamma, mean, var = (g.reshape(i, [channels]) for i in ins[1:5])
    g.add("BatchNormalization", [ins[0], gamma, beta, mean, var], outs,
          epsilon=float(args["eps"]))


# -- arrays ------------------------------------------------------------------------------
@exporter("Reshape")
def _reshape(g, f, args, ins, outs):
    g.reshape(ins[0], list(g.shapes[outs[0]]), outs[0])


@exporter("Transpose")
def _transpose(g, f, args, ins, outs):
    g.add("Transpose", ins, outs, perm=[int(a) for a in args["axes"]])


@exporter("Concatenate")
def _concatenate(g, f, args, ins, outs):
    g.add("Concat", ins, outs, axis=int(args["axis"]))


@exporter("Split")
def _split(g, f, args, ins, outs):
    axis = int(args["axis"])
    parts = g.add("Split", [ins[0], g.ints("split", [1] * len(outs))],
                  [g.name(f"{o}_kept") for o in outs], axis=axis)
    parts = parts if isinstance(parts, list) else [parts]
    for part, out in zip(parts, outs):
        g.add("Squeeze", [part, g.ints("axes", [axis])], out)


@exporter("Stack")
def _stack(g, f, args, ins, outs):
    axis = int(args["axis"])
    expanded = [g.add("Unsqueeze", [x, g.ints("axes", [axis])]) for x in ins]
    g.add("Concat", expanded, outs, axis=axis)


@exporter("Slice")
def _slice(g, f, args, ins, outs):
    shape = g.shapes[ins[0]]
    start, stop, step = (list(args.get(k) or ()) for k in ("start", "stop", "step"))
    n = len(start)
    axes = list(range(len(shape) - n, len(shape)))
    g.add("Slice", [ins[0], g.ints("starts", start), g.ints("ends", stop),
                    g.ints("axes", axes), g.ints("steps", step or [1] * n)], outs)


@exporter("Pad")
def _pad(g, f, args, ins, outs):
    width = list(args["pad_width"])
    rank = len(g.shapes[ins[0]])
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(width) // 2):
        axis = rank - len(width) // 2 + i
        begins[axis], ends[axis] = width[2 * i], width[2 * i + 1]
    mode = {"constant": "constant", "reflect": "reflect", "repeat": "edge"}.get(args["mode"])
    if mode is None:
        _refuse(f, f"mode {args['mode']!r}")
    inputs = [ins[0], g.ints("pads", begins + ends)]
    if mode == "constant":
        inputs.append(g.const("value", float(args["constant_value"])))
    g.add("Pad", inputs, outs, mode=mode)


@exporter("Broadcast")
def _broadcast(g, f, args, ins, outs):
    g.add("Expand", [ins[0], g.ints("shape", g.shapes[outs[0]])], outs)


@exporter("Tile")
def _tile(g, f, args, ins, outs):
    reps = list(args["reps"])
    rank = len(g.shapes[ins[0]])
    x = ins[0]
    if len(reps) > rank:
        x = g.reshape(x, [1] * (len(reps) - rank) + list(g.shapes[ins[0]]))
    g.add("Tile", [x, g.ints("repeats", [1] * (max(rank, len(reps)) - len(reps)) + reps)],
          outs)


@exporter("Flip")
def _flip(g, f, args, ins, outs):
    axes = list(args.get("axes") or [len(g.shapes[ins[0]]) - 1])
    big = np.iinfo(np.int64).max
    g.add("Slice", [ins[0], g.ints("starts", [-1] * len(axes)),
                    g.ints("ends", [-big] * len(axes)), g.ints("axes", axes),
                    g.ints("steps", [-1] * len(axes))], outs)


@exporter("BatchMatmul")
def _batch_matmul(g, f, args, ins, outs):
    a, b = ins[:2]
    for key, name in (("transpose_a", "a"), ("transpose_b", "b")):
        if args[key]:
            x = a if name == "a" else b
            rank = len(g.shapes[x])
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            x = g.add("Transpose", [x], perm=perm)
            a, b = (x, b) if name == "a" else (a, x)
    g.add("MatMul", [a, b], outs)


# -- reductions --------------------------------------------------------------------------
_REDUCE = {"Sum": "ReduceSum", "Mean": "ReduceMean", "Max": "ReduceMax", "Min": "ReduceMin",
           "Prod": "ReduceProd"}


@exporter(*_REDUCE)
def _reduce(g, f, args, ins, outs):
    if args.get("with_index") or args.get("only_index"):
        _refuse(f, "with_index/only_index is not exported")
    rank = len(g.shapes[ins[0]])
    axes = [int(a) % rank for a in (args.get("axes") or range(rank))]
    keep = int(bool(args["keep_dims"]))
    op = _REDUCE[f.type]
    if op == "ReduceSum" or g.opset >= 18:
        g.add(op, [ins[0], g.ints("axes", axes)], outs, keepdims=keep)
    else:
        g.add(op, ins, outs, axes=axes, keepdims=keep)


# -- normalization, resizing, lookup -----------------------------------------------------
@exporter("FusedBatchNormalization")
def _fused_batch_normalization(g, f, args, ins, outs):
    if args["nonlinearity"] != "relu":
        _refuse(f, f"nonlinearity {args['nonlinearity']!r}")
    y = g.name("bn_out")
    _batch_normalization(g, f, {**args, "no_scale": False, "no_bias": False}, ins[:5], [y])
    if len(ins) > 5:
        y = g.add("Add", [y, ins[5]])
    g.add("Relu", [y], outs)


def _normalized(g, x, axes, eps):
    """(x - mean) / sqrt(var + eps) over ``axes``."""
    axes_name = g.ints("axes", axes)
    mean = g.add("ReduceMean", [x], axes=axes, keepdims=1) if g.opset < 18 else \
        g.add("ReduceMean", [x, axes_name], keepdims=1)
    centered = g.add("Sub", [x, mean])
    square = g.add("Mul", [centered, centered])
    var = g.add("ReduceMean", [square], axes=axes, keepdims=1) if g.opset < 18 else \
        g.add("ReduceMean", [square, axes_name], keepdims=1)
    std = g.add("Sqrt", [g.add("Add", [var, g.const("eps", float(eps))])])
    return g.add("Div", [centered, std])


def _scale_shift(g, args, y, ins, outs):
    """``y * gamma + beta`` with the parameters the function has (beta first in NNP)."""
    present = {"beta": not args.get("no_bias"), "gamma": not args.get("no_scale")}
    names = iter(ins[1:])
    beta = next(names) if present["beta"] else None
    gamma = next(names) if present["gamma"] else None
    if gamma is not None:
        y = g.add("Mul", [y, gamma])
    if beta is not None:
        y = g.add("Add", [y, beta])
    g.add("Identity", [y], outs)


@exporter("LayerNormalization")
def _layer_normalization(g, f, args, ins, outs):
    rank = len(g.shapes[ins[0]])
    batch = [int(a) % rank for a in args["batch_axis"]]
    axes = [a for a in range(rank) if a not in batch]
    _scale_shift(g, args, _normalized(g, ins[0], axes, args["eps"]), ins, outs)


@exporter("InstanceNormalization")
def _instance_normalization(g, f, args, ins, outs):
    rank = len(g.shapes[ins[0]])
    keep = {int(args["channel_axis"]) % rank} | {int(a) % rank for a in args["batch_axis"]}
    axes = [a for a in range(rank) if a not in keep]
    _scale_shift(g, args, _normalized(g, ins[0], axes, args["eps"]), ins, outs)


@exporter("GroupNormalization")
def _group_normalization(g, f, args, ins, outs):
    shape = list(g.shapes[ins[0]])
    channel = int(args["channel_axis"]) % len(shape)
    groups = int(args["num_groups"])
    if channel != 1 or [int(a) for a in args["batch_axis"]] != [0]:
        _refuse(f, "only channel_axis=1 and batch_axis=(0,) are exported")
    grouped = g.reshape(ins[0], [shape[0], groups, -1])
    y = g.reshape(_normalized(g, grouped, [2], args["eps"]), shape)
    _scale_shift(g, args, y, ins, outs)


@exporter("Interpolate")
def _interpolate(g, f, args, ins, outs):
    if args.get("channel_last"):
        _refuse(f, "channel_last=True is not exported")
    mode = {"nearest": "nearest", "linear": "linear"}.get(args["mode"])
    if mode is None:
        _refuse(f, f"mode {args['mode']!r}")
    if mode == "linear":
        transform = ("align_corners" if args["align_corners"] else
                     "half_pixel" if args["half_pixel"] else "asymmetric")
        attrs = {}
    else:
        if args["align_corners"] or args["half_pixel_for_nn"]:
            _refuse(f, "nearest with align_corners or half_pixel_for_nn is not exported")
        transform, attrs = ("half_pixel" if args["half_pixel"] else "asymmetric",
                            {"nearest_mode": "floor"})
    sizes = g.ints("sizes", g.shapes[outs[0]])
    g.add("Resize", [ins[0], "", "", sizes], outs, mode=mode,
          coordinate_transformation_mode=transform, **attrs)


@exporter("Unpooling")
def _unpooling(g, f, args, ins, outs):
    if args.get("channel_last"):
        _refuse(f, "channel_last=True is not exported")
    g.add("Resize", [ins[0], "", "", g.ints("sizes", g.shapes[outs[0]])], outs,
          mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")


@exporter("Embed")
def _embed(g, f, args, ins, outs):
    g.add("Gather", [ins[1], g.add("Cast", [ins[0]], to=7)], outs, axis=0)
