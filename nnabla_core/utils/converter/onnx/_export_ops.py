"""NNP functions as ONNX nodes (opset 13 and later): one small function per type.

Each exporter is ``export(g, f, args, ins, outs)``: ``g`` the :class:`OnnxGraph` (its
``shapes`` hold every NNP variable's concrete shape), ``f`` the NNP function message,
``args`` its arguments (``read_arguments``), ``ins``/``outs`` tensor names.
"""
from __future__ import annotations

import math

import numpy as np

EXPORTERS = {}


def exporter(*types):
    def register(fn):
        for t in types:
            EXPORTERS[t] = fn
        return fn
    return register


class Unsupported(NotImplementedError):
    """An NNP function (or one of its arguments) has no ONNX export here."""


def _refuse(f, why):
    raise Unsupported(f"ONNX export: function {f.name!r} ({f.type}): {why}")


# -- elementwise ------------------------------------------------------------------------
_UNARY = {"ReLU": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Abs": "Abs", "Exp": "Exp",
          "Log": "Log", "Sin": "Sin", "Cos": "Cos", "Tan": "Tan", "Sinh": "Sinh",
          "Cosh": "Cosh", "ASin": "Asin", "ACos": "Acos", "ATan": "Atan", "ASinh": "Asinh",
          "ACosh": "Acosh", "ATanh": "Atanh", "Erf": "Erf", "Ceil": "Ceil", "Floor": "Floor",
          "Identity": "Identity", "SoftSign": "Softsign", "Dropout": "Identity"}


@exporter(*_UNARY)
def _unary(g, f, args, ins, outs):
    g.add(_UNARY[f.type], ins[:1], outs)


_BINARY = {"Add2": "Add", "BcAdd2": "Add", "Sub2": "Sub", "Mul2": "Mul", "Div2": "Div",
           "Pow2": "Pow", "Maximum2": "Max", "Minimum2": "Min"}


@exporter(*_BINARY)
def _binary(g, f, args, ins, outs):
    g.add(_BINARY[f.type], ins[:2], outs)


_SCALAR = {"AddScalar": ("Add", False), "MulScalar": ("Mul", False),
           "PowScalar": ("Pow", False), "RSubScalar": ("Sub", True),
           "RDivScalar": ("Div", True), "RPowScalar": ("Pow", True),
           "MaximumScalar": ("Max", False), "MinimumScalar": ("Min", False)}


@exporter(*_SCALAR)
def _scalar(g, f, args, ins, outs):
    op, reverse = _SCALAR[f.type]
    val = g.const("val", args["val"])
    g.add(op, [val, ins[0]] if reverse else [ins[0], val], outs)


@exporter("LeakyReLU")
def _leaky_relu(g, f, args, ins, outs):
    g.add("LeakyRelu", ins, outs, alpha=float(args["alpha"]))


@exporter("ELU")
def _elu(g, f, args, ins, outs):
    g.add("Elu", ins, outs, alpha=float(args["alpha"]))


@exporter("SELU")
def _selu(g, f, args, ins, outs):
    g.add("Selu", ins, outs, alpha=float(args["alpha"]), gamma=float(args["scale"]))


@exporter("HardSigmoid")
def _hard_sigmoid(g, f, args, ins, outs):
    g.add("HardSigmoid", ins, outs, alpha=0.2, beta=0.5)


def _clip(g, x, low, high, out):
    return g.add("Clip", [x, g.const("min", low), g.const("max", high)], out)


@exporter("HardTanh")
def _hard_tanh(g, f, args, ins, outs):
    _clip(g, ins[0], -1.0, 1.0, outs)


@exporter("ReLU6")
def _relu6(g, f, args, ins, outs):
    _clip(g, ins[0], 0.0, 6.0, outs)


@exporter("SoftPlus")
def _softplus(g, f, args, ins, outs):
    beta = float(args["beta"])
    if beta == 1.0:
        g.add("Softplus", ins, outs)
        return
    scaled = g.add("Mul", [ins[0], g.const("beta", beta)])
    g.add("Div", [g.add("Softplus", [scaled]), g.const("beta", beta)], outs)


@exporter("Swish")
def _swish(g, f, args, ins, outs):
    g.add("Mul", [ins[0], g.add("Sigmoid", ins)], outs)


@exporter("Mish")
def _mish(g, f, args, ins, outs):
    g.add("Mul", [ins[0], g.add("Tanh", [g.add("Softplus", ins)])], outs)


@exporter("LogSigmoid")
def _log_sigmoid(g, f, args, ins, outs):
    g.add("Neg", [g.add("Softplus", [g.add("Neg", ins)])], outs)


@exporter("TanhShrink")
def _tanh_shrink(g, f, args, ins, outs):
    g.add("Sub", [ins[0], g.add("Tanh", ins)], outs)


@exporter("GELU")
def _gelu(g, f, args, ins, outs):
    x = ins[0]      # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    cube = g.add("Mul", [g.add("Mul", [x, x]), x])
    inner = g.add("Add", [x, g.add("Mul", [cube, g.const("c", 0.044715)])])
    t = g.add("Tanh", [g.add("Mul", [inner, g.const("k", math.sqrt(2 / math.pi))])])
    half = g.add("Mul", [x, g.const("half", 0.5)])
    g.add("Mul", [half, g.add("Add", [t, g.const("one", 1.0)])], outs)


@exporter("Sign")
def _sign(g, f, args, ins, outs):
    # nnabla's sign gives alpha at 0 (ONNX's: 0)
    if float(args["alpha"]) == 0.0:
        g.add("Sign", ins, outs)
        return
    sign = g.add("Sign", ins)
    zero = g.add("Cast", [g.add("Equal", [ins[0], g.const("zero", 0.0)])], to=1)
    g.add("Add", [sign, g.add("Mul", [zero, g.const("alpha", args["alpha"])])], outs)


@exporter("PReLU")
def _prelu(g, f, args, ins, outs):
    x_shape, slope_shape = g.shapes[ins[0]], g.shapes[ins[1]]
    slope = ins[1]
    if len(slope_shape) == 1 and slope_shape[0] > 1:
        axis = args["base_axis"]
        slope = g.reshape(slope, [slope_shape[0]] + [1] * (len(x_shape) - axis - 1))
    g.add("PRelu", [ins[0], slope], outs)


@exporter("Softmax", "LogSoftmax")
def _softmax(g, f, args, ins, outs):
    axis = args["axis"]
    g.add(f.type, ins, outs, axis=int(axis if axis is not None else len(g.shapes[ins[0]]) - 1))


@exporter("SquaredError")
def _squared_error(g, f, args, ins, outs):
    d = g.add("Sub", ins[:2])
    g.add("Mul", [d, d], outs)


@exporter("AbsoluteError")
def _absolute_error(g, f, args, ins, outs):
    g.add("Abs", [g.add("Sub", ins[:2])], outs)


# -- more activations and arithmetic -----------------------------------------------------
@exporter("CReLU")
def _crelu(g, f, args, ins, outs):
    pos, neg = g.add("Relu", ins), g.add("Relu", [g.add("Neg", ins)])
    g.add("Concat", [pos, neg], outs, axis=int(args["axis"]))


@exporter("CELU")
def _celu(g, f, args, ins, outs):
    alpha = float(args["alpha"])
    pos, neg = g.add("Elu", ins, alpha=alpha), g.add("Elu", [g.add("Neg", ins)], alpha=alpha)
    g.add("Concat", [pos, neg], outs, axis=int(args["axis"]))


@exporter("Round")
def _round(g, f, args, ins, outs):
    # nnabla rounds halves away from zero; ONNX's Round rounds them to even
    magnitude = g.add("Floor", [g.add("Add", [g.add("Abs", ins), g.const("half", 0.5)])])
    g.add("Mul", [g.add("Sign", ins), magnitude], outs)


@exporter("Sinc")
def _sinc(g, f, args, ins, outs):
    zero = g.add("Equal", [ins[0], g.const("zero", 0.0)])
    safe = g.add("Where", [zero, g.const("one", 1.0), ins[0]])
    g.add("Where", [zero, g.const("one", 1.0), g.add("Div", [g.add("Sin", [safe]), safe])],
          outs)


@exporter("CumSum")
def _cumsum(g, f, args, ins, outs):
    g.add("CumSum", [ins[0], g.const("axis", int(args["axis"]), np.int64)], outs,
          exclusive=int(bool(args["exclusive"])), reverse=int(bool(args["reverse"])))


def _as_float(g, tensor, out=None):
    return g.add("Cast", [tensor], out, to=1)


def _as_bool(g, tensor):
    return g.add("Cast", [tensor], to=9)


_COMPARE = {"Greater": "Greater", "GreaterEqual": "GreaterOrEqual", "Less": "Less",
            "LessEqual": "LessOrEqual", "Equal": "Equal"}
_COMPARE_SCALAR = {"GreaterScalar": "Greater", "GreaterEqualScalar": "GreaterOrEqual",
                   "LessScalar": "Less", "LessEqualScalar": "LessOrEqual",
                   "EqualScalar": "Equal"}


@exporter(*_COMPARE)
def _compare(g, f, args, ins, outs):
    _as_float(g, g.add(_COMPARE[f.type], ins[:2]), outs)


@exporter(*_COMPARE_SCALAR)
def _compare_scalar(g, f, args, ins, outs):
    _as_float(g, g.add(_COMPARE_SCALAR[f.type], [ins[0], g.const("val", args["val"])]), outs)


@exporter("NotEqual")
def _not_equal(g, f, args, ins, outs):
    _as_float(g, g.add("Not", [g.add("Equal", ins[:2])]), outs)


@exporter("NotEqualScalar")
def _not_equal_scalar(g, f, args, ins, outs):
    _as_float(g, g.add("Not", [g.add("Equal", [ins[0], g.const("val", args["val"])])]), outs)


_LOGICAL = {"LogicalAnd": "And", "LogicalOr": "Or", "LogicalXor": "Xor"}


@exporter(*_LOGICAL)
def _logical(g, f, args, ins, outs):
    _as_float(g, g.add(_LOGICAL[f.type], [_as_bool(g, x) for x in ins[:2]]), outs)


@exporter("LogicalNot")
def _logical_not(g, f, args, ins, outs):
    _as_float(g, g.add("Not", [_as_bool(g, ins[0])]), outs)


@exporter("Where")
def _where(g, f, args, ins, outs):
    g.add("Where", [_as_bool(g, ins[0])] + ins[1:3], outs)


@exporter("IsNaN", "IsInf")
def _is_nan(g, f, args, ins, outs):
    _as_float(g, g.add("IsNaN" if f.type == "IsNaN" else "IsInf", ins), outs)


@exporter("ResetNaN", "ResetInf")
def _reset_nan(g, f, args, ins, outs):
    test = g.add("IsNaN" if f.type == "ResetNaN" else "IsInf", ins)
    g.add("Where", [test, g.const("val", args["val"]), ins[0]], outs)


# -- losses ------------------------------------------------------------------------------
@exporter("HuberLoss")
def _huber(g, f, args, ins, outs):
    delta = float(args["delta"])
    d = g.add("Sub", ins[:2])
    a = g.add("Abs", [d])
    linear = g.add("Mul", [g.add("Sub", [g.add("Mul", [a, g.const("two", 2.0)]),
                                         g.const("delta", delta)]), g.const("delta", delta)])
    g.add("Where", [g.add("Less", [a, g.const("delta", delta)]), g.add("Mul", [d, d]), linear],
          outs)


@exporter("EpsilonInsensitiveLoss")
def _epsilon_insensitive(g, f, args, ins, outs):
    a = g.add("Abs", [g.add("Sub", ins[:2])])
    g.add("Relu", [g.add("Sub", [a, g.const("eps", float(args["epsilon"]))])], outs)


@exporter("SigmoidCrossEntropy")
def _sigmoid_cross_entropy(g, f, args, ins, outs):
    x, t = ins[:2]      # max(x, 0) - x t + log(1 + exp(-|x|))
    soft = g.add("Softplus", [g.add("Neg", [g.add("Abs", [x])])])
    g.add("Add", [g.add("Sub", [g.add("Relu", [x]), g.add("Mul", [x, t])]), soft], outs)


@exporter("BinaryCrossEntropy")
def _binary_cross_entropy(g, f, args, ins, outs):
    x, t = ins[:2]
    one = g.const("one", 1.0)
    pos = g.add("Mul", [t, g.add("Log", [x])])
    neg = g.add("Mul", [g.add("Sub", [one, t]), g.add("Log", [g.add("Sub", [one, x])])])
    g.add("Neg", [g.add("Add", [pos, neg])], outs)


@exporter("SoftmaxCrossEntropy", "CategoricalCrossEntropy")
def _softmax_cross_entropy(g, f, args, ins, outs):
    x, t = ins[:2]
    axis = int(args["axis"])
    logp = g.add("LogSoftmax", [x], axis=axis) if f.type == "SoftmaxCrossEntropy" \
        else g.add("Log", [x])
    picked = g.add("GatherElements", [logp, g.add("Cast", [t], to=7)], axis=axis)
    g.add("Neg", [picked], outs)


@exporter("Norm")
def _norm(g, f, args, ins, outs):
    rank = len(g.shapes[ins[0]])
    axes = [int(a) % rank for a in (args.get("axes") or range(rank))]
    keep = int(bool(args["keep_dims"]))
    p = float(args["p"])
    if p in (1.0, 2.0):
        op = "ReduceL1" if p == 1.0 else "ReduceL2"
        if g.opset < 18:
            g.add(op, ins, outs, axes=axes, keepdims=keep)
        else:
            g.add(op, [ins[0], g.ints("axes", axes)], outs, keepdims=keep)
        return
    powered = g.add("Pow", [g.add("Abs", ins), g.const("p", p)])
    total = g.add("ReduceSum", [powered, g.ints("axes", axes)], keepdims=keep)
    g.add("Pow", [total, g.const("inv_p", 1.0 / p)], outs)
