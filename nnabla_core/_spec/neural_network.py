"""Neural network layers: affine, convolutions, poolings, unpooling and embed.

Convolution-like functions have ``pad``/``stride``/``dilation`` defaults that
depend on the rank of ``x`` (``None`` in the spec, filled by
:func:`resolve_conv`); poolings default ``stride`` to ``kernel`` and ``pad`` to
zeros (:func:`resolve_pool`). Output sizes follow nnabla exactly, including its
C-style (truncating) integer division:

- convolution: ``(L + 2p - d(k-1) - 1) / s + 1``
- deconvolution: ``s(L-1) - 2p + d(k-1) + 1 + output_padding``
- pooling: ``(L + 2p - k) / s + 1``, or ``(L + p - 1) / s + 1`` when
  ``ignore_border`` is False.
"""
from __future__ import annotations

import math

from .args import check_axis, check_nonnegative, check_positive
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Neural Network Layer"
Y = (Output("y"),)
X_W_B = (Input("x"), Input("weight", parameter=True),
         Input("bias", optional=True, parameter=True))
CONV_ARGS = (Arg("base_axis", "int", 1), Arg("pad", "ints?", None),
             Arg("stride", "ints?", None), Arg("dilation", "ints?", None))
POOL_ARGS = (Arg("kernel", "ints"), Arg("stride", "ints?", None),
             Arg("ignore_border", "bool", True), Arg("pad", "ints?", None),
             Arg("channel_last", "bool", False))


def cdiv(a, b):
    """Integer division truncating toward zero, as C++ (and so nnabla) does."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


# ----------------------------------------------------------------- resolvers
def resolve_conv(spec, in_shapes, args):
    """Normalise ``base_axis`` and fill pad 0s, stride/dilation 1s (one per spatial axis)."""
    ndim = len(in_shapes[0])
    base_axis = check_axis(spec, "base_axis", args["base_axis"], ndim)
    n = ndim - base_axis - 1
    if n < 1:
        raise spec.value_error("base_axis", f"an axis below {ndim - 1}", args["base_axis"],
                               why=f"x of shape {tuple(in_shapes[0])} needs a channel axis "
                                   "and at least one spatial axis after base_axis")
    out = dict(args, base_axis=base_axis)
    for name, fill in (("pad", 0), ("stride", 1), ("dilation", 1), ("output_padding", 0)):
        if name in out and out[name] is None:
            out[name] = (fill,) * n
    return out


def resolve_pool(spec, in_shapes, args):
    """Fill ``stride=kernel`` and ``pad`` zeros."""
    kernel = args["kernel"]
    out = dict(args)
    if out["stride"] is None:
        out["stride"] = tuple(kernel)
    if out["pad"] is None:
        out["pad"] = (0,) * len(kernel)
    return out


# ------------------------------------------------------------ shape helpers
def _check_lengths(spec, n, **named):
    for name, values in named.items():
        if len(values) != n:
            raise spec.value_error(name, f"{n} values (one per spatial axis)", tuple(values))


def _check_geometry(spec, n, pad, stride, dilation):
    _check_lengths(spec, n, pad=pad, stride=stride, dilation=dilation)
    check_nonnegative(spec, "pad", pad)
    check_positive(spec, "stride", stride)
    check_positive(spec, "dilation", dilation)


def _layout(base_axis, n, channel_last):
    """(channel axis of x, first spatial axis of x, channel axis of the weight)."""
    if channel_last:
        return base_axis + n, base_axis, 1 + n
    return base_axis, base_axis + 1, 1


def _kernel_of(spec, weight, first, n):
    kernel = tuple(weight[first:first + n])
    if any(k <= 0 for k in kernel):
        raise spec.shape_error("weight", "positive kernel sizes", weight)
    return kernel


def _check_bias(spec, bias, channels):
    if bias is not None and tuple(bias) != (channels,):
        raise spec.shape_error("bias", f"({channels},)", bias,
                               why="one bias per output channel")


def conv_out_size(spec, size, k, p, s, d):
    out = cdiv(size + 2 * p - d * (k - 1) - 1, s) + 1
    if out <= 0:
        raise spec.value_error("pad", "a configuration with a positive output size", p,
                               why=f"input size {size}, kernel {k}, stride {s}, dilation {d} "
                                   f"give output size {out}")
    return out


def deconv_out_size(spec, size, k, p, s, d, op=0):
    out = s * (size - 1) - 2 * p + d * (k - 1) + 1 + op
    if out <= 0:
        raise spec.value_error("pad", "a configuration with a positive output size", p,
                               why=f"input size {size}, kernel {k}, stride {s}, dilation {d} "
                                   f"give output size {out}")
    return out


def _with(x, axes_values):
    out = list(x)
    for axis, value in axes_values:
        out[axis] = value
    return tuple(out)


# ------------------------------------------------------------- shape rules
def affine(spec, x, weight, bias, *, base_axis):
    """y = x.reshape(M, K) @ weight.reshape(K, L) (+ bias) with K = prod(x[base_axis:])."""
    base_axis = check_axis(spec, "base_axis", base_axis, len(x))
    k = math.prod(x[base_axis:])
    if len(weight) < 2:
        raise spec.shape_error("weight", f"a matrix or tensor ({k}, outmaps, ...)", weight,
                               why="the weight needs at least 2 dimensions")
    if weight[0] != k:
        raise spec.shape_error("weight", f"({k}, ...)", weight,
                               why=f"weight.shape[0] must equal prod(x.shape[{base_axis}:]) "
                                   f"(x.shape={tuple(x)})")
    if bias is not None and tuple(bias) != tuple(weight[1:]):
        raise spec.shape_error("bias", f"{tuple(weight[1:])} (weight.shape[1:])", bias)
    return (tuple(x[:base_axis]) + tuple(weight[1:]),)


def convolution(spec, x, weight, bias, *, base_axis, pad, stride, dilation, group,
                channel_last):
    n = len(x) - base_axis - 1
    _check_geometry(spec, n, pad, stride, dilation)
    check_positive(spec, "group", (group,))
    cax, sax, wcax = _layout(base_axis, n, channel_last)
    if len(weight) != n + 2:
        raise spec.shape_error("weight", f"{n + 2} dimensions (out, in/group, kernel...)",
                               weight)
    kernel = _kernel_of(spec, weight, 1 if channel_last else 2, n)
    channels = x[cax]
    if channels % group or weight[0] % group:
        raise spec.value_error("group", f"a divisor of the input ({channels}) and output "
                               f"({weight[0]}) channels", group)
    if weight[wcax] * group != channels:
        raise spec.shape_error("weight", f"{channels // group} input channels per group at "
                               f"axis {wcax}", weight,
                               why=f"x has {channels} channels and group={group}")
    _check_bias(spec, bias, weight[0])
    sizes = [conv_out_size(spec, x[sax + i], kernel[i], pad[i], stride[i], dilation[i])
             for i in range(n)]
    return (_with(x, [(cax, weight[0])] + [(sax + i, o) for i, o in enumerate(sizes)]),)


def deconvolution(spec, x, weight, bias, *, base_axis, pad, stride, dilation, group,
                  channel_last, output_padding):
    n = len(x) - base_axis - 1
    _check_geometry(spec, n, pad, stride, dilation)
    _check_lengths(spec, n, output_padding=output_padding)
    check_nonnegative(spec, "output_padding", output_padding)
    check_positive(spec, "group", (group,))
    if any(op >= s for op, s in zip(output_padding, stride)):
        raise spec.value_error("output_padding", f"values below stride {tuple(stride)}",
                               tuple(output_padding))
    cax, sax, wcax = _layout(base_axis, n, channel_last)
    if len(weight) != n + 2:
        raise spec.shape_error("weight", f"{n + 2} dimensions (in, out/group, kernel...)",
                               weight)
    kernel = _kernel_of(spec, weight, 1 if channel_last else 2, n)
    if weight[0] != x[cax]:
        raise spec.shape_error("weight", f"({x[cax]}, ...)", weight,
                               why=f"weight.shape[0] must equal the {x[cax]} channels of x")
    if weight[0] % group:
        raise spec.value_error("group", f"a divisor of the {weight[0]} input channels", group)
    out_channels = weight[wcax] * group
    _check_bias(spec, bias, out_channels)
    sizes = [deconv_out_size(spec, x[sax + i], kernel[i], pad[i], stride[i], dilation[i],
                             output_padding[i]) for i in range(n)]
    return (_with(x, [(cax, out_channels)] + [(sax + i, o) for i, o in enumerate(sizes)]),)


def _depthwise(spec, x, weight, base_axis, pad, stride, dilation, factor_name, factor):
    n = len(x) - base_axis - 1
    _check_geometry(spec, n, pad, stride, dilation)
    check_positive(spec, factor_name, (factor,))
    if len(weight) != n + 1:
        raise spec.shape_error("weight", f"{n + 1} dimensions (channels, kernel...)", weight)
    return n, _kernel_of(spec, weight, 1, n)


def depthwise_convolution(spec, x, weight, bias, *, base_axis, pad, stride, dilation,
                          multiplier):
    n, kernel = _depthwise(spec, x, weight, base_axis, pad, stride, dilation,
                           "multiplier", multiplier)
    channels = x[base_axis] * multiplier
    if weight[0] != channels:
        raise spec.shape_error("weight", f"({channels}, ...)", weight,
                               why=f"weight.shape[0] must be channels {x[base_axis]} * "
                                   f"multiplier {multiplier}")
    _check_bias(spec, bias, channels)
    sizes = [conv_out_size(spec, x[base_axis + 1 + i], kernel[i], pad[i], stride[i],
                           dilation[i]) for i in range(n)]
    return (tuple(x[:base_axis]) + (channels,) + tuple(sizes),)


def depthwise_deconvolution(spec, x, weight, bias, *, base_axis, pad, stride, dilation,
                            divisor):
    n, kernel = _depthwise(spec, x, weight, base_axis, pad, stride, dilation,
                           "divisor", divisor)
    if weight[0] != x[base_axis]:
        raise spec.shape_error("weight", f"({x[base_axis]}, ...)", weight,
                               why="weight.shape[0] must equal the channels of x")
    if x[base_axis] % divisor:
        raise spec.value_error("divisor", f"a divisor of the {x[base_axis]} channels", divisor)
    channels = x[base_axis] // divisor
    _check_bias(spec, bias, channels)
    sizes = [deconv_out_size(spec, x[base_axis + 1 + i], kernel[i], pad[i], stride[i],
                             dilation[i]) for i in range(n)]
    return (tuple(x[:base_axis]) + (channels,) + tuple(sizes),)


def pool_spatial_axes(spec, x, n, channel_last):
    """First spatial axis of ``x`` for an ``n``-D pooling; raises if ``x`` is too small."""
    need = n + (1 if channel_last else 0)
    if len(x) < need:
        raise spec.shape_error("x", f"at least {need} dimensions", x,
                               why=f"kernel has {n} spatial axes")
    return len(x) - need


def pool_out_size(spec, size, k, p, s, ignore_border):
    if size == 0:
        return 0
    out = cdiv(size + 2 * p - k, s) + 1 if ignore_border else cdiv(size + p - 1, s) + 1
    if out <= 0:
        raise spec.value_error("kernel", f"a window that fits the input size {size} + "
                               f"padding {p}", k)
    return out


def pooling(spec, x, *, kernel, stride, ignore_border, pad, channel_last, **args):
    n = len(kernel)
    _check_lengths(spec, n, stride=stride, pad=pad)
    check_positive(spec, "kernel", kernel)
    check_positive(spec, "stride", stride)
    check_nonnegative(spec, "pad", pad)
    # A window lying wholly in the padding has no element to take a maximum
    # (or an average without padding) of; nnabla reads an unrelated element.
    if (spec.name == "MaxPooling" or not args.get("including_pad", True)) and any(
            p >= k for p, k in zip(pad, kernel)):
        raise spec.value_error("pad", f"values below kernel {tuple(kernel)}", tuple(pad))
    first = pool_spatial_axes(spec, x, n, channel_last)
    sizes = [pool_out_size(spec, x[first + i], kernel[i], pad[i], stride[i], ignore_border)
             for i in range(n)]
    return (tuple(x[:first]) + tuple(sizes) + tuple(x[first + n:]),)


def global_average_pooling(spec, x):
    if len(x) < 2:
        raise spec.shape_error("x", "at least 2 dimensions (batch, channel, ...)", x)
    return ((x[0], x[1], 1, 1),)


def unpooling(spec, x, *, kernel, channel_last):
    n = len(kernel)
    check_positive(spec, "kernel", kernel)
    first = pool_spatial_axes(spec, x, n, channel_last)
    return (_with(x, [(first + i, x[first + i] * k) for i, k in enumerate(kernel)]),)


def embed(spec, x0, w):
    if len(w) < 2:
        raise spec.shape_error("w", "at least 2 dimensions (vocabulary, features...)", w)
    return (tuple(x0) + tuple(w[1:]),)


# --------------------------------------------------------------- the table
def _conv_spec(name, snake, extra_args, infer, doc):
    return FunctionSpec(name, snake, CATEGORY, X_W_B, CONV_ARGS + extra_args, Y, infer,
                        Needs(inputs=("x", "weight")), doc=doc, resolve_args=resolve_conv)


def _pool_spec(name, snake, extra_args, needs, doc):
    return FunctionSpec(name, snake, CATEGORY, (Input("x"),), POOL_ARGS + extra_args, Y,
                        pooling, needs, doc=doc, resolve_args=resolve_pool)


SPECS = [
    FunctionSpec("Affine", "affine", CATEGORY, X_W_B, (Arg("base_axis", "int", 1),), Y, affine,
                 Needs(inputs=("x", "weight")),
                 doc="Fully connected layer: y = x.reshape(M, K) @ weight.reshape(K, L) + bias,"
                     " with x flattened from `base_axis` on."),
    _conv_spec("Convolution", "convolution",
               (Arg("group", "int", 1), Arg("channel_last", "bool", False)), convolution,
               "N-D convolution with bias (grouped, dilated, strided, padded)."),
    _conv_spec("Deconvolution", "deconvolution",
               (Arg("group", "int", 1), Arg("channel_last", "bool", False),
                Arg("output_padding", "ints?", None)), deconvolution,
               "N-D transposed convolution: the input-gradient of a convolution, plus bias."),
    _conv_spec("DepthwiseConvolution", "depthwise_convolution",
               (Arg("multiplier", "int", 1),), depthwise_convolution,
               "N-D depthwise convolution: `multiplier` filters per input channel."),
    _conv_spec("DepthwiseDeconvolution", "depthwise_deconvolution",
               (Arg("divisor", "int", 1),), depthwise_deconvolution,
               "N-D depthwise transposed convolution: `divisor` input channels per output."),
    _pool_spec("MaxPooling", "max_pooling", (), Needs(inputs=("x",)),
               "Max pooling over windows of size `kernel`; padding never wins the max."),
    _pool_spec("AveragePooling", "average_pooling", (Arg("including_pad", "bool", True),),
               Needs(), "Average pooling; `including_pad` counts padding in the divisor."),
    _pool_spec("SumPooling", "sum_pooling", (), Needs(), "Sum pooling over windows."),
    FunctionSpec("GlobalAveragePooling", "global_average_pooling", CATEGORY, (Input("x"),), (),
                 Y, global_average_pooling, Needs(),
                 doc="Mean over every axis after the channel axis 1; y has shape (N, C, 1, 1)."),
    FunctionSpec("Unpooling", "unpooling", CATEGORY, (Input("x"),),
                 (Arg("kernel", "ints"), Arg("channel_last", "bool", False)), Y, unpooling,
                 Needs(), doc="Inverse of pooling: repeats each value `kernel` times per axis."),
    FunctionSpec("Embed", "embed", CATEGORY, (Input("x0", integer=True),
                                              Input("w", parameter=True)), (), Y, embed,
                 Needs(inputs=("x0",)),
                 doc="Rows of `w` picked by the integer indices `x0`: y = w[x0]."),
]
