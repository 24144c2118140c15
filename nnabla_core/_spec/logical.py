"""Logical: comparisons, boolean operations, NaN/Inf handling, where, sign, searchsorted.

Comparison and boolean outputs hold 0 and 1 in the input's float type (not
bool), as in nnabla. A non-zero input counts as true. These functions are not
differentiable, except ``Sign`` (straight-through), ``ResetNaN``/``ResetInf``
and ``Where`` (with respect to ``x_true`` and ``x_false``).
"""
from __future__ import annotations

from . import shapes
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Logical"
Y = (Output("y"),)
X0 = (Input("x0"),)
VAL = Arg("val", "float", 1)


def _binary(name, snake, doc):
    return FunctionSpec(name, snake, CATEGORY, (Input("x0"), Input("x1")), (), Y,
                        shapes.broadcast2, doc=doc, differentiable=False)


def _scalar(name, snake, doc, val=VAL):
    return FunctionSpec(name, snake, CATEGORY, X0, (val,), Y, shapes.same, doc=doc,
                        differentiable=False)


def where(spec, condition, x_true, x_false):
    """``condition``'s shape must be a leading part of ``x_true``'s; it broadcasts over the rest."""
    if tuple(x_true) != tuple(x_false):
        raise spec.shape_error("x_false", f"the shape of x_true {tuple(x_true)}", x_false)
    if tuple(condition) != tuple(x_true[:len(condition)]):
        raise spec.shape_error("condition", f"a leading part of x_true's shape {tuple(x_true)}",
                               condition, why="condition applies to the first axes of x_true")
    return (tuple(x_true),)


def searchsorted(spec, sorted_sequence, values, *, right):
    """Rows of ``values`` are searched in the matching rows of ``sorted_sequence``."""
    if len(sorted_sequence) != len(values) or len(values) == 0 or \
            tuple(sorted_sequence[:-1]) != tuple(values[:-1]):
        raise spec.shape_error("values", f"shape {tuple(sorted_sequence[:-1])} + (n,)", values,
                               why=f"all but the last axis must match sorted_sequence "
                                   f"{tuple(sorted_sequence)}")
    return (tuple(values),)


def resolve_right(spec, in_shapes, args):
    """``right=None`` means False (search for the leftmost insertion point)."""
    return {**args, "right": bool(args["right"])}


SPECS = [
    FunctionSpec("Sign", "sign", CATEGORY, (Input("x"),), (Arg("alpha", "float", 1.0),), Y,
                 shapes.same, Needs(),
                 doc="Sign: 1 for x > 0, -1 for x < 0 and `alpha` for x = 0; the gradient "
                     "passes straight through."),
    _binary("LogicalAnd", "logical_and", "y = x0 and x1 (non-zero is true), as 0/1."),
    _binary("LogicalOr", "logical_or", "y = x0 or x1 (non-zero is true), as 0/1."),
    _binary("LogicalXor", "logical_xor", "y = x0 xor x1 (non-zero is true), as 0/1."),
    _binary("Equal", "equal", "y = (x0 == x1), as 0/1."),
    _binary("NotEqual", "not_equal", "y = (x0 != x1), as 0/1."),
    _binary("GreaterEqual", "greater_equal", "y = (x0 >= x1), as 0/1."),
    _binary("Greater", "greater", "y = (x0 > x1), as 0/1."),
    _binary("LessEqual", "less_equal", "y = (x0 <= x1), as 0/1."),
    _binary("Less", "less", "y = (x0 < x1), as 0/1."),
    FunctionSpec("SearchSorted", "searchsorted", CATEGORY,
                 (Input("sorted_sequence"), Input("values")), (Arg("right", "bool?", None),),
                 Y, searchsorted, differentiable=False, resolve_args=resolve_right,
                 doc="Insertion indices of `values` in each sorted row of `sorted_sequence` "
                     "(last axis), as floats; `right` picks the rightmost position."),
    _scalar("LogicalAndScalar", "logical_and_scalar", "y = x0 and val, as 0/1.",
            Arg("val", "bool")),
    _scalar("LogicalOrScalar", "logical_or_scalar", "y = x0 or val, as 0/1.",
            Arg("val", "bool")),
    _scalar("LogicalXorScalar", "logical_xor_scalar", "y = x0 xor val, as 0/1.",
            Arg("val", "bool")),
    _scalar("EqualScalar", "equal_scalar", "y = (x0 == val), as 0/1."),
    _scalar("NotEqualScalar", "not_equal_scalar", "y = (x0 != val), as 0/1."),
    _scalar("GreaterEqualScalar", "greater_equal_scalar", "y = (x0 >= val), as 0/1."),
    _scalar("GreaterScalar", "greater_scalar", "y = (x0 > val), as 0/1."),
    _scalar("LessEqualScalar", "less_equal_scalar", "y = (x0 <= val), as 0/1."),
    _scalar("LessScalar", "less_scalar", "y = (x0 < val), as 0/1."),
    FunctionSpec("LogicalNot", "logical_not", CATEGORY, X0, (), Y, shapes.same,
                 doc="y = not x0 (zero is false), as 0/1.", differentiable=False),
    FunctionSpec("IsNaN", "isnan", CATEGORY, X0, (), Y, shapes.same,
                 doc="y = 1 where x0 is NaN, else 0.", differentiable=False),
    FunctionSpec("IsInf", "isinf", CATEGORY, X0, (), Y, shapes.same,
                 doc="y = 1 where x0 is +-Inf, else 0.", differentiable=False),
    FunctionSpec("ResetNaN", "reset_nan", CATEGORY, X0, (Arg("val", "float", 0),), Y,
                 shapes.same, Needs(inputs=("x0",)),
                 doc="Replace NaN by `val`; the replaced elements get zero gradient."),
    FunctionSpec("ResetInf", "reset_inf", CATEGORY, X0, (Arg("val", "float", 0),), Y,
                 shapes.same, Needs(inputs=("x0",)),
                 doc="Replace +-Inf by `val`; the replaced elements get zero gradient."),
    FunctionSpec("Where", "where", CATEGORY,
                 (Input("condition"), Input("x_true"), Input("x_false")), (), Y, where,
                 Needs(inputs=("condition",)),
                 doc="y = x_true where condition is non-zero, else x_false; condition "
                     "covers the leading axes of x_true and repeats over the rest."),
]
