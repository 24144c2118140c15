"""Arithmetic: binary, variadic and scalar element-wise functions."""
from __future__ import annotations

from . import shapes
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Arithmetic"
X0X1 = (Input("x0"), Input("x1"))
Y = (Output("y"),)
INPLACE = Arg("inplace", "bool", False)


def _binary(name, snake, needs, doc, inplace=True):
    args = (INPLACE,) if inplace else ()
    return FunctionSpec(name, snake, CATEGORY, X0X1, args, Y, shapes.broadcast2,
                        Needs(inputs=needs), doc=doc)


def _scalar(name, snake, default, needs_x, needs_y, doc, inplace=False):
    args = (Arg("val", "float", default),) + ((INPLACE,) if inplace else ())
    return FunctionSpec(name, snake, CATEGORY, (Input("x"),), args, Y, shapes.same,
                        Needs(inputs=("x",) if needs_x else (),
                              outputs=("y",) if needs_y else ()), doc=doc)


def _variadic(name, snake, needs, doc):
    return FunctionSpec(name, snake, CATEGORY, (Input("x", variadic=True),), (), Y,
                        shapes.broadcast_n, needs, doc=doc)


SPECS = [
    _binary("Add2", "add2", (), "Element-wise addition: y = x0 + x1."),
    _binary("Sub2", "sub2", (), "Element-wise subtraction: y = x0 - x1."),
    _binary("Mul2", "mul2", ("x0", "x1"), "Element-wise multiplication: y = x0 * x1."),
    _binary("Div2", "div2", ("x0", "x1"), "Element-wise division: y = x0 / x1."),
    _binary("Pow2", "pow2", ("x0", "x1"), "Element-wise power: y = x0 ** x1."),
    _binary("Maximum2", "maximum2", ("x0", "x1"), "Element-wise maximum.", inplace=False),
    _binary("Minimum2", "minimum2", ("x0", "x1"), "Element-wise minimum.", inplace=False),
    _variadic("AddN", "add_n", Needs(), "Sum of all inputs: y = x0 + x1 + ..."),
    _variadic("MulN", "mul_n", Needs(inputs=("*",)), "Product of all inputs."),
    _scalar("AddScalar", "add_scalar", 1, False, False, "y = x + val.", inplace=True),
    _scalar("MulScalar", "mul_scalar", 1, False, False, "y = x * val.", inplace=True),
    _scalar("PowScalar", "pow_scalar", 1, True, False, "y = x ** val.", inplace=True),
    _scalar("RSubScalar", "r_sub_scalar", 1, False, False, "y = val - x."),
    _scalar("RDivScalar", "r_div_scalar", 1, True, False, "y = val / x."),
    _scalar("RPowScalar", "r_pow_scalar", 1, False, True, "y = val ** x."),
    _scalar("MaximumScalar", "maximum_scalar", 1.0, True, False, "y = max(x, val)."),
    _scalar("MinimumScalar", "minimum_scalar", 1.0, True, False, "y = min(x, val)."),
]
