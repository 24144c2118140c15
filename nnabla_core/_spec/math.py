"""Math: element-wise transcendental and rounding functions, batched matmul, cumulative ops.

``CumSum`` and ``CumProd`` sit in nnabla's "Reduction" category; they are
specified here (with that category) because they share the cumulative-scan
rules below.
"""
from __future__ import annotations

from . import shapes
from .args import check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Math"
X = (Input("x"),)
Y = (Output("y"),)
NEEDS_X = Needs(inputs=("x",))
NEEDS_Y = Needs(outputs=("y",))


def _unary(name, snake, needs, doc):
    return FunctionSpec(name, snake, CATEGORY, X, (), Y, shapes.same, needs, doc=doc)


def batch_matmul(spec, a, b, *, transpose_a, transpose_b):
    """Shape of ``a @ b`` over the last two axes; batch axes broadcast (same rank, >= 3)."""
    for arg, shape in (("a", a), ("b", b)):
        if len(shape) < 3:
            raise spec.shape_error(arg, "at least 3 dimensions (batch..., rows, cols)", shape)
    if len(a) != len(b):
        raise spec.shape_error("b", f"{len(a)} dimensions like a {tuple(a)}", b,
                               why="batch_matmul needs inputs of the same rank")
    rows, inner_a = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    inner_b, cols = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
    if inner_a != inner_b:
        raise spec.shape_error("b", f"a reduction size of {inner_a} matching a {tuple(a)}", b,
                               why=f"transpose_a={transpose_a}, transpose_b={transpose_b}")
    batch = []
    for da, db in zip(a[:-2], b[:-2]):
        if da != db and da != 1 and db != 1:
            raise spec.shape_error("b", f"batch axes broadcastable with a {tuple(a)}", b)
        batch.append(db if da == 1 else da)
    return (tuple(batch) + (rows, cols),)


def resolve_cumulative_axis(spec, in_shapes, args):
    """``axis=None`` means axis 0 (not numpy's flattening); negative axes are normalised."""
    axis = 0 if args["axis"] is None else args["axis"]
    ndim = len(in_shapes[0])
    if ndim == 0:
        raise spec.shape_error("x", "at least 1 dimension", in_shapes[0])
    return {**args, "axis": check_axis(spec, "axis", axis, ndim)}


def _cumulative(name, snake, needs, doc):
    args = (Arg("axis", "int?", None), Arg("exclusive", "bool", False),
            Arg("reverse", "bool", False))
    return FunctionSpec(name, snake, "Reduction", X, args, Y, shapes.same, needs, doc=doc,
                        resolve_args=resolve_cumulative_axis)


SPECS = [
    _unary("Abs", "abs", NEEDS_X, "Absolute value: y = |x|."),
    _unary("Exp", "exp", NEEDS_Y, "Exponential: y = exp(x)."),
    _unary("Log", "log", NEEDS_X, "Natural logarithm: y = log(x)."),
    _unary("Identity", "identity", Needs(), "Identity: y = x."),
    FunctionSpec("BatchMatmul", "batch_matmul", CATEGORY, (Input("a"), Input("b")),
                 (Arg("transpose_a", "bool", False), Arg("transpose_b", "bool", False)), Y,
                 batch_matmul, Needs(inputs=("a", "b")),
                 doc="Matrix product over the last two axes, batched (and broadcast) over "
                     "the others: y[..., i, j] = sum_k a'[..., i, k] b'[..., k, j], where "
                     "a' and b' are optionally transposed."),
    _unary("Round", "round", Needs(),
           "Round half away from zero; the gradient passes straight through."),
    _unary("Ceil", "ceil", Needs(), "Ceiling; the gradient passes straight through."),
    _unary("Floor", "floor", Needs(), "Floor; the gradient passes straight through."),
    _unary("Sin", "sin", NEEDS_X, "Sine: y = sin(x)."),
    _unary("Cos", "cos", NEEDS_X, "Cosine: y = cos(x)."),
    _unary("Tan", "tan", NEEDS_X, "Tangent: y = tan(x)."),
    _unary("Sinh", "sinh", NEEDS_X, "Hyperbolic sine: y = sinh(x)."),
    _unary("Cosh", "cosh", NEEDS_X, "Hyperbolic cosine: y = cosh(x)."),
    _unary("ASin", "asin", NEEDS_X, "Inverse sine: y = arcsin(x)."),
    _unary("ACos", "acos", NEEDS_X, "Inverse cosine: y = arccos(x)."),
    _unary("ATan", "atan", NEEDS_X, "Inverse tangent: y = arctan(x)."),
    FunctionSpec("ATan2", "atan2", CATEGORY, (Input("x0"), Input("x1")), (), Y,
                 shapes.broadcast2, Needs(inputs=("x0", "x1")),
                 doc="Two-argument inverse tangent: y = arctan2(x0, x1), broadcasting."),
    _unary("ASinh", "asinh", NEEDS_X, "Inverse hyperbolic sine: y = arcsinh(x)."),
    _unary("ACosh", "acosh", NEEDS_X, "Inverse hyperbolic cosine: y = arccosh(x)."),
    _unary("ATanh", "atanh", NEEDS_X, "Inverse hyperbolic tangent: y = arctanh(x)."),
    _unary("Erf", "erf", NEEDS_X, "Gauss error function: y = erf(x)."),
    _cumulative("CumSum", "cumsum", Needs(),
                "Cumulative sum along `axis` (default 0); `exclusive` leaves out the "
                "current element, `reverse` scans from the end."),
    _cumulative("CumProd", "cumprod", Needs(inputs=("x",), outputs=("y",)),
                "Cumulative product along `axis` (default 0); `exclusive` leaves out the "
                "current element, `reverse` scans from the end."),
]
