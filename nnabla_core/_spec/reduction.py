"""Reduction: sum, mean, max, min, prod and norm over axes, and whole-array reductions.

The function types take ``axes`` (default: every axis, filled in by
:func:`resolve_axes`) and ``keep_dims``. Max and Min can also return the
position of the extreme value inside the reduced block (``with_index``,
``only_index``) as a ``uint64`` array; the position is the C-order flat index
over the reduced axes, taken in the order ``axes`` lists them.

CumSum and CumProd are in nnabla's reduction category but live in ``math``.
"""
from __future__ import annotations

from . import shapes
from .args import check_axes
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Reduction"
X = (Input("x"),)
Y = (Output("y"),)
AXES = Arg("axes", "ints?", None)
KEEP_DIMS = Arg("keep_dims", "bool", False)


def resolve_axes(spec, in_shapes, args):
    """Fill ``axes=None`` with every axis and make the given axes non-negative.

    The order of explicit axes is kept: it defines Max/Min index numbering.
    """
    ndim = len(in_shapes[0])
    axes = args["axes"]
    if axes is None:
        axes = tuple(range(ndim))
    else:
        axes = check_axes(spec, "axes", axes, ndim)
    return {**args, "axes": axes}


def resolve_norm(spec, in_shapes, args):
    """Axes as :func:`resolve_axes`; also rejects an order ``p`` below 1."""
    if args["p"] < 1:
        raise spec.value_error("p", "a value >= 1", args["p"])
    return resolve_axes(spec, in_shapes, args)


def extreme(spec, x, *, axes, keep_dims, with_index, only_index):
    """Max/Min: the value output, the index output, or both (same shape)."""
    (y,) = shapes.reduce_axes(spec, x, axes=axes, keep_dims=keep_dims)
    if with_index and not only_index:
        return (y, y)
    return (y,)


def _reduce(name, snake, needs, doc):
    return FunctionSpec(name, snake, CATEGORY, X, (AXES, KEEP_DIMS), Y, shapes.reduce_axes,
                        needs, doc=doc, resolve_args=resolve_axes)


def _extreme(name, snake, doc):
    args = (AXES, KEEP_DIMS, Arg("with_index", "bool", False), Arg("only_index", "bool", False))
    # With only_index the single output holds indices; the kernel returns it as uint64.
    outputs = (Output("y"), Output("index", dtype="uint64"))
    return FunctionSpec(name, snake, CATEGORY, X, args, outputs, extreme, Needs(), doc=doc,
                        resolve_args=resolve_axes)


def _whole(name, snake, doc):
    return FunctionSpec(name, snake, CATEGORY, X, (), Y, shapes.scalar, Needs(), doc=doc)


SPECS = [
    _reduce("Sum", "sum", Needs(), "Sum over `axes`: y = sum_{axes} x."),
    _reduce("Mean", "mean", Needs(), "Mean over `axes`: y = sum_{axes} x / N."),
    _extreme("Max", "max", "Maximum over `axes`; optionally its index (uint64)."),
    _extreme("Min", "min", "Minimum over `axes`; optionally its index (uint64)."),
    _reduce("Prod", "prod", Needs(inputs=("x",), outputs=("y",)),
            "Product over `axes`: y = prod_{axes} x."),
    FunctionSpec("Norm", "norm", CATEGORY, X, (Arg("p", "float", 2.0), AXES, KEEP_DIMS), Y,
                 shapes.reduce_axes, Needs(inputs=("x",), outputs=("y",)),
                 doc="p-norm over `axes`: y = (sum_{axes} |x|^p)^(1/p), p >= 1.",
                 resolve_args=resolve_norm),
    _whole("ReduceSum", "reduce_sum", "Sum of every element, as a 0-d array."),
    _whole("ReduceMean", "reduce_mean", "Mean of every element, as a 0-d array."),
]
