"""Quantization layers: binarised activations and weights, INQ, fixed-point, power-of-two,
min-max and linear quantizers, pruning.

Most of them pass the gradient straight through the rounding step (nnabla's STE rules),
so their backward is not the derivative of their forward; see each kernel.

Some functions write into their inputs, as nnabla does: the binary-weight layers store the
binarised weight (and its scale ``alpha``) in ``binary_weight``; INQ layers write the
quantised values of fixed weights back into ``weight`` and update the indicator;
min-max quantize updates ``qr_min``/``qr_max`` (statistics and range nudging).
"""
from __future__ import annotations

import math

from . import shapes
from .base import Arg, FunctionSpec, Input, Needs, Output
from .neural_network import affine, convolution, resolve_conv

CATEGORY = "Quantization Neural Network Layers"
Y = (Output("y"),)
X = (Input("x"),)
W = Input("weight", parameter=True)
BIAS = Input("bias", optional=True, parameter=True)
BASE_AXIS = Arg("base_axis", "int", 1)
CONV_GEOMETRY = (Arg("pad", "ints?", None), Arg("stride", "ints?", None),
                 Arg("dilation", "ints?", None), Arg("group", "int", 1))
ZERO_TO = Arg("quantize_zero_to", "float", 1.0)
INQ_ARGS = (Arg("num_bits", "int", 4), Arg("inq_iterations", "ints", ()),
            Arg("selection_algorithm", "str", "largest_abs", choices=("largest_abs", "random")),
            Arg("seed", "int", -1))
# nnabla's dtype codes accepted by quantize_linear: 1 int8, 2 uint8.
QUANTIZED_DTYPES = {1: (-128, 127), 2: (0, 255)}


# ------------------------------------------------------------- shape rules
def _same_as_weight(spec, name, weight, other):
    if tuple(other) != tuple(weight):
        raise spec.shape_error(name, f"the weight's shape {tuple(weight)}", other)


def _alpha(spec, weight, alpha):
    outs = math.prod(weight[1:]) if spec.name.endswith("Affine") else weight[0]
    if math.prod(alpha) != outs:
        raise spec.shape_error("alpha", f"{outs} elements (one scale per output)", alpha)


def _alpha_and_bias(spec, rest):
    """(alpha or None, bias or None) from the inputs after binary_weight; an omitted
    trailing bias may be absent altogether."""
    n_alpha = 1 if spec.name.startswith("BinaryWeight") else 0
    rest = tuple(rest) + (None,) * (n_alpha + 1 - len(rest))
    return (rest[0] if n_alpha else None), rest[n_alpha]


def binary_affine(spec, x, weight, binary_weight, *rest, base_axis, quantize_zero_to):
    alpha, bias = _alpha_and_bias(spec, rest)
    _same_as_weight(spec, "binary_weight", weight, binary_weight)
    if alpha is not None:
        _alpha(spec, weight, alpha)
    return affine(spec, x, weight, bias, base_axis=base_axis)


def binary_convolution(spec, x, weight, binary_weight, *rest, quantize_zero_to, **geometry):
    alpha, bias = _alpha_and_bias(spec, rest)
    _same_as_weight(spec, "binary_weight", weight, binary_weight)
    if alpha is not None:
        _alpha(spec, weight, alpha)
    return convolution(spec, x, weight, bias, channel_last=False, **geometry)


def _check_inq(spec, weight, indicator, num_bits):
    _same_as_weight(spec, "indicator_fixedweights", weight, indicator)
    if num_bits < 2:
        raise spec.value_error("num_bits", "at least 2", num_bits,
                               why="one bit holds the sign and one the zero")


def inq_affine(spec, x, weight, indicator, bias=None, *, base_axis, num_bits, **args):
    _check_inq(spec, weight, indicator, num_bits)
    return affine(spec, x, weight, bias, base_axis=base_axis)


def inq_convolution(spec, x, weight, indicator, bias=None, *, num_bits, inq_iterations,
                    selection_algorithm, seed, **geometry):
    _check_inq(spec, weight, indicator, num_bits)
    return convolution(spec, x, weight, bias, channel_last=False, **geometry)


def fixed_point(spec, x, *, sign, n, delta, ste_fine_grained):
    if n < (2 if sign else 1):
        raise spec.value_error("n", f"at least {2 if sign else 1} bits", n,
                               why="a signed number spends one bit on the sign")
    if delta <= 0:
        raise spec.value_error("delta", "a positive step", delta)
    return (tuple(x),)


def pow2(spec, x, *, sign, with_zero, n, m, ste_fine_grained):
    bits = n - int(sign) - int(with_zero)
    if bits < 1:
        raise spec.value_error("n", f"more than {int(sign) + int(with_zero)} bits", n,
                               why="the sign and the zero each take one bit")
    return (tuple(x),)


def min_max(spec, x, qr_min, qr_max, ql_min, ql_max, **args):
    for name, shape in (("qr_max", qr_max), ("ql_min", ql_min), ("ql_max", ql_max)):
        if tuple(shape) != tuple(qr_min):
            raise spec.shape_error(name, f"qr_min's shape {tuple(qr_min)}", shape)
    if len(qr_min) != len(x) or any(q not in (1, s) for q, s in zip(qr_min, x)):
        raise spec.shape_error("qr_min", f"x's rank {len(x)} with sizes 1 or equal to x's "
                               f"{tuple(x)}", qr_min)
    return (tuple(x),)


def prune(spec, x, *, rate):
    if not 0.0 <= rate <= 1.0:
        raise spec.value_error("rate", "a value in [0, 1]", rate)
    return (tuple(x),)


def linear_quantization(spec, x, scale, zero_point, **args):
    if "dtype" in args and args["dtype"] not in QUANTIZED_DTYPES:
        raise spec.value_error("dtype", "1 (int8) or 2 (uint8)", args["dtype"])
    for name, shape in (("scale", scale), ("zero_point", zero_point)):
        shapes.broadcast2(spec, x, shape)
        if len(shape) != len(x) or any(s not in (1, t) for s, t in zip(shape, x)):
            raise spec.shape_error(name, f"a shape broadcastable to x {tuple(x)}", shape)
    return (tuple(x),)


# --------------------------------------------------------------- the table
def _binary_layer(name, snake, with_alpha, conv, doc):
    inputs = (Input("x"), W, Input("binary_weight", parameter=True))
    inputs += (Input("alpha", parameter=True),) if with_alpha else ()
    args = (BASE_AXIS,) + (CONV_GEOMETRY if conv else ()) + (ZERO_TO,)
    mutates = ("binary_weight", "alpha") if with_alpha else ("binary_weight",)
    return FunctionSpec(name, snake, CATEGORY, inputs + (BIAS,), args, Y,
                        binary_convolution if conv else binary_affine,
                        Needs(inputs=("x", "weight")), doc=doc, mutates=mutates,
                        resolve_args=resolve_conv if conv else None)


def _inq_layer(name, snake, conv, doc):
    inputs = (Input("x"), W, Input("indicator_fixedweights", parameter=True, integer=True),
              BIAS)
    args = (BASE_AXIS,) + (CONV_GEOMETRY if conv else ()) + INQ_ARGS
    return FunctionSpec(name, snake, CATEGORY, inputs, args, Y,
                        inq_convolution if conv else inq_affine,
                        Needs(inputs=("x", "weight")), doc=doc,
                        mutates=("weight", "indicator_fixedweights"),
                        resolve_args=resolve_conv if conv else None)


STE = "Backward passes the gradient straight through"

SPECS = [
    FunctionSpec("BinarySigmoid", "binary_sigmoid", CATEGORY, X, (), Y, shapes.same,
                 Needs(inputs=("x",)),
                 doc="y = 1 where x > 0, else 0. " + STE + ", halved, where |x| < 1."),
    FunctionSpec("BinaryTanh", "binary_tanh", CATEGORY, X, (), Y, shapes.same,
                 Needs(inputs=("x",)),
                 doc="y = 1 where x > 0, else -1. " + STE + " where |x| < 1."),
    _binary_layer("BinaryConnectAffine", "binary_connect_affine", False, False,
                  "Affine with sign(weight) (zeros to `quantize_zero_to`), stored in "
                  "binary_weight. The binary weight's gradient goes to `weight`."),
    _binary_layer("BinaryConnectConvolution", "binary_connect_convolution", False, True,
                  "Convolution with sign(weight) (zeros to `quantize_zero_to`), stored in "
                  "binary_weight. The binary weight's gradient goes to `weight`."),
    _binary_layer("BinaryWeightAffine", "binary_weight_affine", True, False,
                  "Affine with sign(weight) scaled per output by mean |weight| (`alpha`), "
                  "stored in binary_weight. The gradient goes to `weight` unscaled."),
    _binary_layer("BinaryWeightConvolution", "binary_weight_convolution", True, True,
                  "Convolution with sign(weight) scaled per output map by mean |weight| "
                  "(`alpha`), stored in binary_weight. The gradient goes to `weight`."),
    _inq_layer("INQAffine", "inq_affine", False,
               "Incremental network quantization affine: weights whose indicator is 1 are "
               "fixed to powers of two (written back into `weight`); at the iterations in "
               "`inq_iterations` half of the learnable weights (all at the last) get fixed."),
    _inq_layer("INQConvolution", "inq_convolution", True,
               "Incremental network quantization convolution (see INQAffine)."),
    FunctionSpec("FixedPointQuantize", "fixed_point_quantize", CATEGORY, X,
                 (Arg("sign", "bool", True), Arg("n", "int", 8), Arg("delta", "float", 0.0625),
                  Arg("ste_fine_grained", "bool", True)), Y, fixed_point, Needs(inputs=("x",)),
                 doc="Round to multiples of `delta`, saturated to n bits. " + STE
                     + " (zero outside the range when `ste_fine_grained`)."),
    FunctionSpec("MinMaxQuantize", "min_max_quantize", CATEGORY,
                 (Input("x"), Input("qr_min"), Input("qr_max"), Input("ql_min"),
                  Input("ql_max")),
                 (Arg("decay", "float", 0.999), Arg("x_min_max", "bool", False),
                  Arg("ema", "bool", False), Arg("ste_fine_grained", "bool", True),
                  Arg("eps", "float", 0.01)), Y, min_max, Needs(inputs=("x",)),
                 mutates=("qr_min", "qr_max"),
                 doc="Quantize x to the levels [ql_min, ql_max] over the (nudged) range "
                     "[qr_min, qr_max]; the range may follow min/max of x (and its EMA)."),
    FunctionSpec("Pow2Quantize", "pow2_quantize", CATEGORY, X,
                 (Arg("sign", "bool", True), Arg("with_zero", "bool", True), Arg("n", "int", 8),
                  Arg("m", "int", 1), Arg("ste_fine_grained", "bool", True)), Y, pow2,
                 Needs(inputs=("x",)),
                 doc="Round |x| to a power of two in [2^(m - 2^bits + 1), 2^m]. " + STE + "."),
    FunctionSpec("Prune", "prune", CATEGORY, X, (Arg("rate", "float", 0.9),), Y, prune,
                 Needs(), doc="Zero the fraction `rate` of elements smallest in |x|. "
                 + STE + "."),
    FunctionSpec("QuantizeLinear", "quantize_linear", CATEGORY,
                 (Input("x"), Input("scale"), Input("zero_point")),
                 (Arg("round_mode", "str", "HALF_AWAY_FROM_ZERO",
                      choices=("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN")),
                  Arg("narrow_range", "bool", False), Arg("dtype", "int", 1)), Y,
                 linear_quantization, Needs(inputs=("scale",)), mutates=("zero_point",),
                 doc="y = saturate(round(x / scale) + zero_point) in the range of `dtype` "
                     "(1 int8, 2 uint8); zero_point is rounded and saturated in place. "
                     "Backward: dx = dy / scale."),
    FunctionSpec("DequantizeLinear", "dequantize_linear", CATEGORY,
                 (Input("x"), Input("scale"), Input("zero_point")), (), Y,
                 linear_quantization, Needs(inputs=("scale",)),
                 doc="y = (x - zero_point) * scale. Backward: dx = dy * scale."),
]
