"""ONNX operators as NNP functions: one small function per operator.

Each importer is ``import_(ctx, node, attrs)``; ``ctx.nnp`` is the
:class:`~._nnp_builder.NnpBuilder`, ``ctx.constants`` the initializers and constant outputs
(numpy arrays), ``ctx.shapes`` ONNX's inferred shapes.
"""
from __future__ import annotations



IMPORTERS = {}


def importer(*ops):
    def register(fn):
        for op in ops:
            IMPORTERS[op] = fn
        return fn
    return register


class Unsupported(NotImplementedError):
    """An ONNX operator (or attribute value) has no NNP import here."""


def _refuse(node, why):
    raise Unsupported(f"ONNX import: {node.op_type} node {node.name or node.output[0]!r}: "
                      f"{why}")


def tensor(ctx, name):
    """The NNP variable of ONNX tensor ``name`` (a constant becomes a parameter)."""
    if name in ctx.nnp.shapes:
        return name
    if name in ctx.constants:
        return ctx.nnp.parameter(name, ctx.constants[name])
    raise ValueError(f"ONNX import: tensor {name!r} is used before it is computed")


def const(ctx, node, index, required=True):
    """The constant value of input ``index`` of ``node`` (None if absent and optional)."""
    if index >= len(node.input) or not node.input[index]:
        if required:
            _refuse(node, f"input {index} is missing")
        return None
    value = ctx.constants.get(node.input[index])
    if value is None and required:
        _refuse(node, f"input {node.input[index]!r} must be a constant (initializer)")
    return value


def _rank(ctx, name):
    return len(ctx.nnp.shapes[name]) if name in ctx.nnp.shapes else ctx.constants[name].ndim


@importer("Constant")
def _constant(ctx, node, attrs):
    from onnx import numpy_helper

    if "value" not in attrs:
        _refuse(node, "only the 'value' attribute is imported")
    ctx.constants[node.output[0]] = numpy_helper.to_array(attrs["value"])


@importer("Identity", "Dropout")
def _identity(ctx, node, attrs):
    ctx.nnp.add("Identity", [tensor(ctx, node.input[0])], node.output[0])


_UNARY = {"Relu": "ReLU", "Sigmoid": "Sigmoid", "Tanh": "Tanh", "Exp": "Exp", "Log": "Log",
          "Abs": "Abs", "Erf": "Erf", "Sin": "Sin", "Cos": "Cos", "Tan": "Tan",
          "Asin": "ASin", "Acos": "ACos", "Atan": "ATan", "Sinh": "Sinh", "Cosh": "Cosh",
          "Asinh": "ASinh", "Acosh": "ACosh", "Atanh": "ATanh", "Floor": "Floor",
          "Ceil": "Ceil", "Softsign": "SoftSign", "Softplus": "SoftPlus"}


@importer(*_UNARY)
def _unary(ctx, node, attrs):
    ctx.nnp.add(_UNARY[node.op_type], [tensor(ctx, node.input[0])], node.output[0])


@importer("Sign")
def _sign(ctx, node, attrs):
    ctx.nnp.add("Sign", [tensor(ctx, node.input[0])], node.output[0], alpha=0.0)


@importer("Neg")
def _neg(ctx, node, attrs):
    ctx.nnp.add("MulScalar", [tensor(ctx, node.input[0])], node.output[0], val=-1.0)


@importer("Sqrt")
def _sqrt(ctx, node, attrs):
    ctx.nnp.add("PowScalar", [tensor(ctx, node.input[0])], node.output[0], val=0.5)


@importer("Reciprocal")
def _reciprocal(ctx, node, attrs):
    ctx.nnp.add("RDivScalar", [tensor(ctx, node.input[0])], node.output[0], val=1.0)


@importer("LeakyRelu")
def _leaky_relu(ctx, node, attrs):
    ctx.nnp.add("LeakyReLU", [tensor(ctx, node.input[0])], node.output[0],
                alpha=float(attrs.get("alpha", 0.01)))


@importer("Elu")
def _elu(ctx, node, attrs):
    ctx.nnp.add("ELU", [tensor(ctx, node.input[0])], node.output[0],
                alpha=float(attrs.get("alpha", 1.0)))


@importer("Selu")
def _selu(ctx, node, attrs):
    ctx.nnp.add("SELU", [tensor(ctx, node.input[0])], node.output[0],
                alpha=float(attrs.get("alpha", 1.67326319217681884765625)),
                scale=float(attrs.get("gamma", 1.05070102214813232421875)))


@importer("HardSigmoid")
def _hard_sigmoid(ctx, node, attrs):
    alpha, beta = float(attrs.get("alpha", 0.2)), float(attrs.get("beta", 0.5))
    x = tensor(ctx, node.input[0])
    if (alpha, beta) == (0.2, 0.5):
        ctx.nnp.add("HardSigmoid", [x], node.output[0])
        return
    h = ctx.nnp.add("AddScalar", [ctx.nnp.add("MulScalar", [x], val=alpha)], val=beta)
    h = ctx.nnp.add("MaximumScalar", [h], val=0.0)
    ctx.nnp.add("MinimumScalar", [h], node.output[0], val=1.0)


@importer("Clip")
def _clip(ctx, node, attrs):
    low, high = const(ctx, node, 1, False), const(ctx, node, 2, False)
    low = attrs.get("min") if low is None else float(low)
    high = attrs.get("max") if high is None else float(high)
    x = tensor(ctx, node.input[0])
    if (low, high) == (0.0, 6.0):
        ctx.nnp.add("ReLU6", [x], node.output[0])
        return
    steps = [("MaximumScalar", low), ("MinimumScalar", high)]
    steps = [(kind, v) for kind, v in steps if v is not None] or [("Identity", None)]
    for i, (kind, v) in enumerate(steps):
        out = node.output[0] if i == len(steps) - 1 else None
        x = ctx.nnp.add(kind, [x], out, **({} if v is None else {"val": float(v)}))


@importer("PRelu")
def _prelu(ctx, node, attrs):
    slope = ctx.constants.get(node.input[1])
    x = tensor(ctx, node.input[0])
    if slope is None or slope.size not in (1, ctx.nnp.shapes[x][1]):
        _refuse(node, "the slope must be a constant, shared or per channel (axis 1)")
    p = ctx.nnp.parameter(node.input[1], slope.reshape(-1) if slope.size > 1 else
                          slope.reshape(()))
    ctx.nnp.add("PReLU", [x, p], node.output[0], base_axis=1)


@importer("Softmax", "LogSoftmax")
def _softmax(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    rank = len(ctx.nnp.shapes[x])
    axis = int(attrs.get("axis", -1 if ctx.opset >= 13 else 1)) % rank
    if ctx.opset < 13 and axis != rank - 1:
        _refuse(node, "before opset 13 Softmax flattens from 'axis'; only the last axis is "
                      "imported")
    ctx.nnp.add("Softmax" if node.op_type == "Softmax" else "LogSoftmax", [x],
                node.output[0], axis=axis)


# -- arithmetic ------------------------------------------------------------------------
_BINARY = {"Add": "Add2", "Sub": "Sub2", "Mul": "Mul2", "Div": "Div2", "Pow": "Pow2",
           "Max": "Maximum2", "Min": "Minimum2"}
_WITH_SCALAR = {"Add": ("AddScalar", 1), "Sub": ("AddScalar", -1), "Mul": ("MulScalar", 1),
                "Div": ("MulScalar", "reciprocal"), "Pow": ("PowScalar", 1),
                "Max": ("MaximumScalar", 1), "Min": ("MinimumScalar", 1)}
_SCALAR_WITH = {"Add": "AddScalar", "Sub": "RSubScalar", "Mul": "MulScalar",
                "Div": "RDivScalar", "Pow": "RPowScalar", "Max": "MaximumScalar",
                "Min": "MinimumScalar"}


def _scalar(ctx, name):
    value = ctx.constants.get(name)
    return float(value.reshape(-1)[0]) if value is not None and value.size == 1 else None


def _same_rank(ctx, name, rank):
    """``name`` as an NNP variable of rank ``rank`` (leading 1s added, as broadcasting)."""
    if name in ctx.constants and name not in ctx.nnp.shapes:
        value = ctx.constants[name]
        return ctx.nnp.parameter(name, value.reshape((1,) * (rank - value.ndim) + value.shape))
    v = tensor(ctx, name)
    shape = ctx.nnp.shapes[v]
    if len(shape) == rank:
        return v
    return ctx.nnp.add("Reshape", [v], shape=(1,) * (rank - len(shape)) + shape)


@importer(*_BINARY)
def _binary(ctx, node, attrs):
    if len(node.input) != 2:
        _refuse(node, f"{len(node.input)} inputs; two are imported")
    a, b = node.input
    op = node.op_type
    if _scalar(ctx, b) is not None and a not in ctx.constants:
        kind, sign = _WITH_SCALAR[op]
        val = _scalar(ctx, b)
        val = 1.0 / val if sign == "reciprocal" else sign * val
        ctx.nnp.add(kind, [tensor(ctx, a)], node.output[0], val=val)
        return
    if _scalar(ctx, a) is not None and b not in ctx.constants:
        ctx.nnp.add(_SCALAR_WITH[op], [tensor(ctx, b)], node.output[0], val=_scalar(ctx, a))
        return
    rank = max(_rank(ctx, a), _rank(ctx, b))
    ctx.nnp.add(_BINARY[op], [_same_rank(ctx, a, rank), _same_rank(ctx, b, rank)],
                node.output[0])


@importer("Sum")
def _sum(ctx, node, attrs):
    total = tensor(ctx, node.input[0])
    for i, name in enumerate(node.input[1:]):
        out = node.output[0] if i == len(node.input) - 2 else None
        total = ctx.nnp.add("Add2", [total, tensor(ctx, name)], out)
    if len(node.input) == 1:
        ctx.nnp.add("Identity", [total], node.output[0])


# -- logic, selection, casts -------------------------------------------------------------
@importer("Cast")
def _cast(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    to = int(attrs["to"])
    if to == 9:             # bool: nonzero is true (NNP keeps 0/1 values)
        ctx.nnp.add("NotEqualScalar", [x], node.output[0], val=0.0)
    elif to in (1, 10, 11):
        ctx.nnp.add("Identity", [x], node.output[0])
    elif to in (2, 3, 4, 5, 6, 7, 12, 13):      # integers truncate toward zero
        magnitude = ctx.nnp.add("Floor", [ctx.nnp.add("Abs", [x])])
        ctx.nnp.add("Mul2", [ctx.nnp.add("Sign", [x], alpha=0.0), magnitude], node.output[0])
    else:
        _refuse(node, f"cast to element type {to} is not imported")


_COMPARE = {"Greater": ("Greater", "GreaterScalar", "LessScalar"),
            "GreaterOrEqual": ("GreaterEqual", "GreaterEqualScalar", "LessEqualScalar"),
            "Less": ("Less", "LessScalar", "GreaterScalar"),
            "LessOrEqual": ("LessEqual", "LessEqualScalar", "GreaterEqualScalar"),
            "Equal": ("Equal", "EqualScalar", "EqualScalar")}


@importer(*_COMPARE)
def _compare(ctx, node, attrs):
    a, b = node.input[:2]
    pair, with_scalar, scalar_with = _COMPARE[node.op_type]
    if _scalar(ctx, b) is not None and a not in ctx.constants:
        ctx.nnp.add(with_scalar, [tensor(ctx, a)], node.output[0], val=_scalar(ctx, b))
    elif _scalar(ctx, a) is not None and b not in ctx.constants:
        ctx.nnp.add(scalar_with, [tensor(ctx, b)], node.output[0], val=_scalar(ctx, a))
    else:
        rank = max(_rank(ctx, a), _rank(ctx, b))
        ctx.nnp.add(pair, [_same_rank(ctx, a, rank), _same_rank(ctx, b, rank)],
                    node.output[0])


_LOGICAL = {"And": "LogicalAnd", "Or": "LogicalOr", "Xor": "LogicalXor"}


@importer(*_LOGICAL)
def _logical(ctx, node, attrs):
    a, b = node.input[:2]
    rank = max(_rank(ctx, a), _rank(ctx, b))
    ctx.nnp.add(_LOGICAL[node.op_type], [_same_rank(ctx, a, rank), _same_rank(ctx, b, rank)],
                node.output[0])


@importer("Not")
def _not(ctx, node, attrs):
    ctx.nnp.add("LogicalNot", [tensor(ctx, node.input[0])], node.output[0])


@importer("IsNaN", "IsInf")
def _is_nan(ctx, node, attrs):
    if node.op_type == "IsInf" and not (attrs.get("detect_positive", 1) and
                                        attrs.get("detect_negative", 1)):
        _refuse(node, "detecting one sign of infinity is not imported")
    ctx.nnp.add(node.op_type, [tensor(ctx, node.input[0])], node.output[0])


@importer("Where")
def _where(ctx, node, attrs):
    shape = ctx.shapes.get(node.output[0])
    rank = len(shape) if shape else max(_rank(ctx, n) for n in node.input)
    inputs = []
    for name in node.input:
        v = _same_rank(ctx, name, rank)
        if shape and ctx.nnp.shapes[v] != tuple(shape):
            v = ctx.nnp.add("Broadcast", [v], shape=tuple(shape))
        inputs.append(v)
    ctx.nnp.add("Where", inputs, node.output[0])


@importer("CumSum")
def _cumsum(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    axis = int(const(ctx, node, 1).reshape(-1)[0]) % len(ctx.nnp.shapes[x])
    ctx.nnp.add("CumSum", [x], node.output[0], axis=axis,
                exclusive=bool(attrs.get("exclusive", 0)), reverse=bool(attrs.get("reverse", 0)))


@importer("Gather")
def _gather(ctx, node, attrs):
    name = node.input[0]
    data = ctx.constants.get(name) if name not in ctx.nnp.shapes else None
    table = ctx.nnp.parameter(name, data) if data is not None else tensor(ctx, name)
    if int(attrs.get("axis", 0)) != 0 or len(ctx.nnp.shapes[table]) != 2:
        _refuse(node, "only a lookup in a 2-D table along axis 0 (Embed) is imported")
    ctx.nnp.add("Embed", [tensor(ctx, node.input[1]), table], node.output[0])


@importer("ReduceL1", "ReduceL2")
def _reduce_norm(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    rank = len(ctx.nnp.shapes[x])
    axes = const(ctx, node, 1, False)
    axes = attrs.get("axes") if axes is None else [int(a) for a in axes]
    axes = tuple(sorted(int(a) % rank for a in (axes or range(rank))))
    ctx.nnp.add("Norm", [x], node.output[0], p=1.0 if node.op_type == "ReduceL1" else 2.0,
                axes=axes, keep_dims=bool(attrs.get("keepdims", 1)))


def _text(attrs, key, default):
    value = attrs.get(key, default)
    return value.decode() if isinstance(value, bytes) else value


@importer("Resize")
def _resize(ctx, node, attrs):
    x = tensor(ctx, node.input[0])
    shape = ctx.shapes.get(node.output[0])
    in_shape = ctx.nnp.shapes[x]
    if shape is None or tuple(shape[:2]) != in_shape[:2]:
        _refuse(node, "only resizing of the axes after batch and channel is imported")
    mode = _text(attrs, "mode", "nearest")
    transform = _text(attrs, "coordinate_transformation_mode", "half_pixel")
    if mode == "linear" and transform in ("align_corners", "half_pixel", "asymmetric"):
        args = dict(mode="linear", align_corners=transform == "align_corners",
                    half_pixel=transform == "half_pixel")
    elif (mode == "nearest" and transform in ("asymmetric", "half_pixel")
          and _text(attrs, "nearest_mode", "round_prefer_floor") == "floor"):
        args = dict(mode="nearest", align_corners=False, half_pixel=transform == "half_pixel")
    else:
        _refuse(node, f"mode {mode!r} with coordinate_transformation_mode {transform!r} is "
                      f"not imported")
    ctx.nnp.add("Interpolate", [x], node.output[0], output_size=tuple(shape[2:]), **args)
