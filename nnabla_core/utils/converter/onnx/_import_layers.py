"""ONNX layers and array operators as NNP functions (see :mod:`._import_ops` for the
importer convention)."""
from __future__ import annotations

import math

import numpy as np

from ._import_ops import _refuse, _same_rank, const, importer, tensor


# -- layers ------------------------------------------------------------------------------
def _pads(node, attrs, rank):
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto not in ("NOTSET", "VALID"):
        _refuse(node, f"auto_pad={auto!r} is not imported (give explicit pads)")
    pads = list(attrs.get("pads", [0] * (2 * rank)))
    if auto == "VALID":
        pads = [0] * (2 * rank)
    if pads[:rank] != pads[rank:]:
        _refuse(node, f"asymmetric pads {pads} are not imported")
    return tuple(pads[:rank])


def _conv_args(node, attrs, rank):
    return dict(pad=_pads(node, attrs, rank), stride=tuple(attrs.get("strides", [1] * rank)),
                dilation=tuple(attrs.get("dilations", [1] * rank)),
                group=int(attrs.get("group", 1)))


@importer("Conv")
def _conv(ctx, node, attrs):
    w = tensor(ctx, node.input[1])
    rank = len(ctx.nnp.shapes[w]) - 2
    bias = tensor(ctx, node.input[2]) if len(node.input) > 2 and node.input[2] else None
    ctx.nnp.add("Convolution", [tensor(ctx, node.input[0]), w, bias], node.output[0],
                base_axis=1, **_conv_args(node, attrs, rank))


@importer("ConvTranspose")
def _conv_transpose(ctx, node, attrs):
    if "output_shape" in attrs:
        _refuse(node, "output_shape is not imported (give pads and output_padding)")
    w = tensor(ctx, node.input[1])
    rank = len(ctx.nnp.shapes[w]) - 2
    bias = tensor(ctx, node.input[2]) if len(node.input) > 2 and node.input[2] else None
    ctx.nnp.add("Deconvolution", [tensor(ctx, node.input[0]), w, bias], node.output[0],
                base_axis=1, output_padding=tuple(attrs.get("output_padding", [0] * rank)),
                **_conv_args(node, attrs, rank))


@importer("Gemm")
def _gemm(ctx, node, attrs):
    a = tensor(ctx, node.input[0])
    if attrs.get("transA", 0):
        a = ctx.nnp.add("Transpose", [a], axes=(1, 0))
    b_const = ctx.constants.get(node.input[1])
    if b_const is not None and node.input[1] not in ctx.nnp.shapes:
        b = ctx.nnp.parameter(node.input[1], b_const.T if attrs.get("transB", 0) else b_const)
    else:
        b = tensor(ctx, node.input[1])
        if attrs.get("transB", 0):
            b = ctx.nnp.add("Transpose", [b], axes=(1, 0))
    n = ctx.nnp.shapes[b][1]
    bias = None
    if len(node.input) > 2 and node.input[2]:
        c = ctx.constants.get(node.input[2])
        if c is None or c.size not in (1, n):
            _refuse(node, "C must be a constant of N values (or one)")
        bias = ctx.nnp.parameter(node.input[2], np.broadcast_to(c.reshape(-1), (n,)) *
                                 float(attrs.get("beta", 1.0)))
    alpha = float(attrs.get("alpha", 1.0))
    if alpha != 1.0:
        a = ctx.nnp.add("MulScalar", [a], val=alpha)
    ctx.nnp.add("Affine", [a, b, bias], node.output[0], base_axis=1)


@importer("MatMul")
def _matmul(ctx, node, attrs):
    a = tensor(ctx, node.input[0])
    rank_a = len(ctx.nnp.shapes[a])
    b_const = ctx.constants.get(node.input[1])
    if b_const is not None and b_const.ndim == 2 and node.input[1] not in ctx.nnp.shapes:
        w = ctx.nnp.parameter(node.input[1], b_const)
        ctx.nnp.add("Affine", [a, w, None], node.output[0], base_axis=rank_a - 1)
        return
    b = tensor(ctx, node.input[1])
    if len(ctx.nnp.shapes[b]) != rank_a or rank_a < 3:
        _refuse(node, "MatMul of tensors is imported for equal ranks of 3 or more "
                      "(BatchMatmul), or with a constant 2-D right side (Affine)")
    ctx.nnp.add("BatchMatmul", [a, b], node.output[0])


def _pool_args(node, attrs):
    kernel = tuple(attrs["kernel_shape"])
    if attrs.get("ceil_mode", 0):
        _refuse(node, "ceil_mode=1 is not imported")
    if any(d != 1 for d in attrs.get("dilations", [1] * len(kernel))):
        _refuse(node, "dilated pooling is not imported")
    return dict(kernel=kernel, stride=tuple(attrs.get("strides", [1] * len(kernel))),
                ignore_border=True, pad=_pads(node, attrs, len(kernel)))


@importer("MaxPool")
def _max_pool(ctx, node, attrs):
    if len(node.output) > 1 and node.output[1]:
        _refuse(node, "the Indices output is not imported")
    ctx.nnp.add("MaxPooling", [tensor(ctx, node.input[0])], node.output[0],
                **_pool_args(node, attrs))


@importer("AveragePool")
def _average_pool(ctx, node, attrs):
    ctx.nnp.add("AveragePooling", [tensor(ctx, node.input[0])], node.output[0],
                including_pad=bool(attrs.get("count_include_pad", 0)),
                **_pool_args(node, attrs))


@importer("GlobalAveragePool")
def _global_average_pool(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    if len(ctx.nnp.shapes[x]) == 4:
        ctx.nnp.add("GlobalAveragePooling", [x], node.output[0])
    else:
        axes = tuple(range(2, len(ctx.nnp.shapes[x])))
        ctx.nnp.add("Mean", [x], node.output[0], axes=axes, keep_dims=True)


@importer("GlobalMaxPool")
def _global_max_pool(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    ctx.nnp.add("Max", [x], node.output[0], axes=tuple(range(2, len(ctx.nnp.shapes[x]))),
                keep_dims=True)


@importer("BatchNormalization")
def _batch_normalization(ctx, node, attrs):
    if attrs.get("training_mode", 0) or (len(node.output) > 1 and any(node.output[1:])):
        _refuse(node, "training mode is not imported")
    x = tensor(ctx, node.input[0])
    rank, channels = len(ctx.nnp.shapes[x]), ctx.nnp.shapes[x][1]
    shape = (1, channels) + (1,) * (rank - 2)
    scale, bias, mean, var = (const(ctx, node, i) for i in range(1, 5))
    beta, gamma, mean, var = (ctx.nnp.parameter(node.input[i], v.reshape(shape))
                              for i, v in ((2, bias), (1, scale), (3, mean), (4, var)))
    ctx.nnp.add("BatchNormalization", [x, beta, gamma, mean, var], node.output[0], axes=(1,),
                eps=float(attrs.get("epsilon", 1e-5)), batch_stat=False)


# -- arrays ------------------------------------------------------------------------------
def _reshape_to_onnx_shape(ctx, node):
    shape = ctx.shapes.get(node.output[0])
    if shape is None:
        _refuse(node, "the output shape is not known statically")
    ctx.nnp.add("Reshape", [tensor(ctx, node.input[0])], node.output[0], shape=tuple(shape))


@importer("Reshape", "Squeeze", "Unsqueeze")
def _reshape(ctx, node, attrs):
    _reshape_to_onnx_shape(ctx, node)


@importer("Flatten")
def _flatten(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    shape = ctx.nnp.shapes[x]
    axis = int(attrs.get("axis", 1)) % (len(shape) + 1)
    ctx.nnp.add("Reshape", [x], node.output[0],
                shape=(math.prod(shape[:axis]), math.prod(shape[axis:])))


@importer("Transpose")
def _transpose(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    rank = len(ctx.nnp.shapes[x])
    perm = tuple(attrs.get("perm", range(rank - 1, -1, -1)))
    ctx.nnp.add("Transpose", [x], node.output[0], axes=perm)


@importer("Concat")
def _concat(ctx, node, attrs):
    xs = [tensor(ctx, n) for n in node.input]
    axis = int(attrs["axis"]) % len(ctx.nnp.shapes[xs[0]])
    ctx.nnp.add("Concatenate", xs, node.output[0], axis=axis)


@importer("Pad")
def _pad(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    rank = len(ctx.nnp.shapes[x])
    pads = const(ctx, node, 1, False)
    pads = list(attrs.get("pads", [])) if pads is None else [int(p) for p in pads]
    value = const(ctx, node, 2, False)
    value = float(attrs.get("value", 0.0)) if value is None else float(value.reshape(-1)[0])
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    modes = {"constant": "constant", "reflect": "reflect", "edge": "repeat"}
    if mode not in modes or any(p < 0 for p in pads):
        _refuse(node, f"mode {mode!r} with pads {pads} is not imported")
    width = []
    for axis in range(rank):
        width += [pads[axis], pads[axis + rank]]
    while len(width) > 2 and width[:2] == [0, 0]:
        width = width[2:]       # NNP pads the trailing axes the width lists
    ctx.nnp.add("Pad", [x], node.output[0], pad_width=tuple(width), mode=modes[mode],
                constant_value=value)


@importer("Slice")
def _slice(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    shape = ctx.nnp.shapes[x]
    starts, ends = const(ctx, node, 1), const(ctx, node, 2)
    axes = const(ctx, node, 3, False)
    steps = const(ctx, node, 4, False)
    axes = range(len(starts)) if axes is None else [int(a) % len(shape) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    start, stop, step = [0] * len(shape), list(shape), [1] * len(shape)
    flips = _full_reversals(shape, axes, starts, ends, steps)
    if flips is not None:
        ctx.nnp.add("Flip", [x], node.output[0], axes=tuple(flips))
        return
    for axis, b, e, s in zip(axes, starts, ends, steps):
        b, e, s = int(b), int(e), int(s)
        if s < 0:
            _refuse(node, "negative steps are imported only to reverse whole axes")
        size = shape[axis]
        b = min(max(b + size if b < 0 else b, 0), size)
        e = min(max(e + size if e < 0 else e, 0), size)
        start[axis], stop[axis], step[axis] = b, e, s
    ctx.nnp.add("Slice", [x], node.output[0], start=tuple(start), stop=tuple(stop),
                step=tuple(step))


def _full_reversals(shape, axes, starts, ends, steps):
    """The axes a Slice reverses completely (step -1 from the last element to before the
    first), if that is all it does; else None."""
    if not all(int(s) == -1 for s in steps):
        return None
    for axis, b, e in zip(axes, starts, ends):
        size = shape[axis]
        if not (int(b) == -1 or int(b) >= size - 1) or int(e) >= -size:
            return None
    return list(axes)


@importer("Split")
def _split(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    shape = ctx.nnp.shapes[x]
    axis = int(attrs.get("axis", 0)) % len(shape)
    sizes = const(ctx, node, 1, False)
    sizes = list(attrs.get("split", [])) if sizes is None else [int(v) for v in sizes]
    sizes = sizes or [shape[axis] // len(node.output)] * len(node.output)
    offset = 0
    for size, out in zip(sizes, node.output):
        start, stop = [0] * len(shape), list(shape)
        start[axis], stop[axis] = offset, offset + size
        ctx.nnp.add("Slice", [x], out, start=tuple(start), stop=tuple(stop),
                    step=(1,) * len(shape))
        offset += size


@importer("Expand")
def _expand(ctx, node, attrs):
    shape = ctx.shapes.get(node.output[0])
    if shape is None:
        _refuse(node, "the output shape is not known statically")
    x = _same_rank(ctx, node.input[0], len(shape))
    ctx.nnp.add("Broadcast", [x], node.output[0], shape=tuple(shape))


@importer("Tile")
def _tile(ctx, node, attrs):
    reps = const(ctx, node, 1)
    ctx.nnp.add("Tile", [tensor(ctx, node.input[0])], node.output[0],
                reps=tuple(int(r) for r in reps))


_REDUCE = {"ReduceSum": "Sum", "ReduceMean": "Mean", "ReduceMax": "Max", "ReduceMin": "Min",
           "ReduceProd": "Prod"}


@importer(*_REDUCE)
def _reduce(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    rank = len(ctx.nnp.shapes[x])
    axes = const(ctx, node, 1, False)
    axes = attrs.get("axes") if axes is None else [int(a) for a in axes]
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            ctx.nnp.add("Identity", [x], node.output[0])
            return
        axes = range(rank)
    ctx.nnp.add(_REDUCE[node.op_type], [x], node.output[0],
                axes=tuple(sorted(int(a) % rank for a in axes)),
                keep_dims=bool(attrs.get("keepdims", 1)))
