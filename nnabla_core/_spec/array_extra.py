"""More array functions: top-k selection, einsum, data-dependent selections, packed sequences.

Several outputs here are sized by the data (``nonzero``, ``unique``, ``bool_gather``,
packed sequences): those specs set ``dynamic_shape`` and their shape rules return a
placeholder (nnabla's: 0 along the data-dependent axis), which the forward pass
replaces with the shape the kernel produced.
"""
from __future__ import annotations

import math
import string

from .args import check_axis
from .base import ALL_INPUTS, Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Array Manipulation"
X = (Input("x"),)
Y = (Output("y"),)


# ------------------------------------------------------------------------ top-k
def top_k_data(spec, x, *, k, abs, reduce, base_axis, largest, with_index):
    ba = check_axis(spec, "base_axis", base_axis, len(x))
    sample = math.prod(x[ba:])
    if not 1 <= k <= sample:
        raise spec.value_error("k", f"in [1, {sample}]", k,
                               why=f"a sample of x {tuple(x)} from base_axis {base_axis} "
                                   f"has {sample} elements")
    if with_index and not reduce:
        raise spec.value_error("reduce", "True when with_index=True", reduce)
    y = tuple(x[:ba]) + (k,) if reduce else tuple(x)
    return (y, y) if with_index else (y,)


def top_k_grad(spec, x, *, k, abs, base_axis):
    ba = check_axis(spec, "base_axis", base_axis, len(x))
    sample = math.prod(x[ba:])
    if not 1 <= k <= sample:
        raise spec.value_error("k", f"in [1, {sample}]", k)
    return (tuple(x),)


# ----------------------------------------------------------------------- einsum
def _operand_letters(spec, term, ndim, i):
    """Split one operand term into (letters before '...', letters after, ellipsis ndim)."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise spec.value_error("equation", "at most one '...' per operand", term)
    head, dots, tail = term.partition("...")
    if not all(c in string.ascii_letters for c in head + tail):
        raise spec.value_error("equation", "ASCII letters, ',', '...' and '->'", term)
    n_ell = ndim - len(head) - len(tail)
    if n_ell < 0 or (n_ell and not dots):
        raise spec.value_error("equation", f"{ndim} subscripts for x[{i}]", term,
                               why=f"x[{i}] has {ndim} dimensions")
    return head, tail, n_ell if dots else 0


def parse_einsum(spec, equation, shapes):
    """Expand ``equation`` for operands of ``shapes`` into explicit single letters.

    Returns ``(terms, out, sizes)``: one letter string per operand (ellipsis axes
    become fresh letters, right-aligned as in numpy), the output letters (implicit
    form: ellipsis axes, then the letters used once, in ASCII order) and the size of
    every letter after size-1 broadcasting.
    """
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise spec.value_error("equation", f"{len(shapes)} operand terms (one per input)",
                               equation)
    parts = [_operand_letters(spec, t, len(s), i) for i, (t, s) in enumerate(zip(terms, shapes))]
    n_ell = max((p[2] for p in parts), default=0)
    free = [c for c in string.ascii_letters if c not in equation]
    if n_ell > len(free):
        raise spec.value_error("equation", "fewer than 52 distinct subscripts", equation)
    ell = "".join(free[:n_ell])
    expanded = [h + ell[n_ell - e:] + t for h, t, e in parts]
    sizes = _letter_sizes(spec, expanded, shapes)
    if arrow:
        out = _output_letters(spec, rhs, ell, sizes)
    else:
        counts = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(counts) if c not in ell
                                   and counts.count(c) == 1))
    return expanded, out, sizes


def _letter_sizes(spec, terms, shapes):
    sizes = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        for c, n in zip(term, shape):
            m = sizes.get(c, 1)
            if n != m and 1 not in (n, m):
                raise spec.shape_error(f"x[{i}]", f"size {m} for subscript '{c}'", shape,
                                       why="operands must agree on each subscript (or be 1)")
            sizes[c] = n if m == 1 else m
    return sizes


def _output_letters(spec, rhs, ell, sizes):
    if rhs.count("...") > 1 or "." in rhs.replace("...", ""):
        raise spec.value_error("equation", "at most one '...' in the output", rhs)
    if ell and "..." not in rhs:
        raise spec.value_error("equation", "'...' in the output", rhs,
                               why="operands have ellipsis axes to keep")
    out = rhs.replace("...", ell)
    for c in out:
        if c not in sizes or out.count(c) > 1:
            raise spec.value_error("equation", "output subscripts used once and present "
                                   "in the operands", rhs)
    return out


def einsum(spec, *xs, equation):
    _, out, sizes = parse_einsum(spec, equation, xs)
    return (tuple(sizes[c] for c in out),)


# ------------------------------------------------------------- data-dependent shapes
def unique(spec, x, *, flatten, axis, sorted, with_index, with_inverse,
           with_counts):
    size = math.prod(x)
    if flatten:
        y, n = (size,), size
    else:
        if axis is None:
            raise spec.value_error("axis", "an axis when flatten=False", axis)
        ax = check_axis(spec, "axis", axis, len(x))
        y, n = tuple(x), x[ax]
    out = [y]
    out += [(n,)] * (int(with_index) + int(with_counts))
    if with_inverse:
        out.insert(1 + int(with_index), (n,))
    return tuple(out)


def nonzero(spec, x):
    return ((len(x), 0),)


def _mask_prefix(spec, data, mask, data_name):
    if tuple(data[:len(mask)]) != tuple(mask):
        raise spec.shape_error("mask", f"the leading axes of {data_name} "
                               f"{tuple(data[:len(mask)])}", mask,
                               why=f"{data_name} has shape {tuple(data)}")


def bool_gather(spec, input, mask):
    _mask_prefix(spec, input, mask, "input")
    return ((0,) + tuple(input[len(mask):]),)


def bool_scatter(spec, input, mask, output):
    if not input:
        raise spec.shape_error("input", "(nnz, ...): at least one dimension", input)
    y = tuple(mask) + tuple(input[1:])
    if output is not None and tuple(output) != y:
        raise spec.shape_error("output", f"{y} (mask.shape + input.shape[1:])", output)
    return (y,)


def bool_fill(spec, data, mask, *, value):
    data, mask = tuple(data), tuple(mask)
    if len(mask) > len(data) or any(m not in (1, d) for m, d in zip(mask[::-1], data[::-1])):
        raise spec.shape_error("mask", f"a shape broadcastable to data {data}", mask)
    return (data,)


def _sequence_axes(spec, padded, batch_first, name):
    if len(padded) < 2:
        raise spec.shape_error(name, "(T, B, ...) or (B, T, ...): at least two dimensions",
                               padded)
    return (padded[1], padded[0]) if batch_first else (padded[0], padded[1])


def pack_padded_sequence(spec, padded_sequence, lengths, *, batch_first):
    t, b = _sequence_axes(spec, padded_sequence, batch_first, "padded_sequence")
    if tuple(lengths) != (b,):
        raise spec.shape_error("lengths", f"({b},): one length per sequence", lengths)
    return ((0,) + tuple(padded_sequence[2:]), (t,))


def pad_packed_sequence(spec, packed_sequence, batch_sizes, *, batch_first, padding_value,
                        total_length):
    if not packed_sequence:
        raise spec.shape_error("packed_sequence", "(N, ...): at least one dimension",
                               packed_sequence)
    if len(batch_sizes) != 1:
        raise spec.shape_error("batch_sizes", "(T,): one batch size per time step",
                               batch_sizes)
    t = max(batch_sizes[0], total_length)
    lead = (0, t) if batch_first else (t, 0)
    return (lead + tuple(packed_sequence[1:]), (0,))


def batch_square(spec, x, **args):
    if len(x) != 3 or x[1] != x[2]:
        raise spec.shape_error("x", "(batch, n, n)", x)
    return (tuple(x),)


# --------------------------------------------------------------------------- table
NO_NEEDS = Needs()


def _spec(name, snake, inputs, args, infer, needs=NO_NEEDS, outputs=Y, **kw):
    return FunctionSpec(name, snake, CATEGORY, inputs, args, outputs, infer, needs, **kw)


MASK = Input("mask")
INDEX = "int32"     # nnabla stores these index/size outputs as 32-bit integers

SPECS = [
    _spec("TopKData", "top_k_data", X,
          (Arg("k", "int"), Arg("abs", "bool", False), Arg("reduce", "bool", True),
           Arg("base_axis", "int", 1), Arg("largest", "bool", True),
           Arg("with_index", "bool", False)), top_k_data,
          outputs=(Output("y"), Output("indices", dtype="uint64")),
          doc="Keeps the k largest (or smallest; by magnitude with abs) values of each "
              "sample (axes from base_axis); reduce gives them as (..., k). Without reduce "
              "the gradient passes to every element, as in nnabla."),
    _spec("TopKGrad", "top_k_grad", X,
          (Arg("k", "int"), Arg("abs", "bool", False), Arg("base_axis", "int", 1)),
          top_k_grad,
          doc="Identity forward; backward keeps only the k largest gradients of each sample."),
    _spec("Einsum", "einsum", (Input("x", variadic=True),), (Arg("equation", "str", ""),),
          einsum, ALL_INPUTS,
          doc="Einstein summation over the inputs, as numpy.einsum(equation, *x)."),
    _spec("Unique", "unique", X,
          (Arg("flatten", "bool", True), Arg("axis", "int?", None), Arg("sorted", "bool", True),
           Arg("with_index", "bool", False), Arg("with_inverse", "bool", False),
           Arg("with_counts", "bool", False)), unique,
          outputs=(Output("y"), Output("indices", dtype=INDEX),
                   Output("inverse_indices", dtype=INDEX), Output("counts", dtype=INDEX)),
          differentiable=False, dynamic_shape=True,
          doc="Unique elements (or slices along axis), sorted or in order of first "
              "appearance; optionally their first indices, the inverse map and counts."),
    _spec("NonZero", "nonzero", X, (), nonzero, outputs=(Output("y", dtype="uint64"),),
          differentiable=False, dynamic_shape=True,
          doc="Indices of the non-zero elements as a (x.ndim, nnz) array."),
    _spec("BoolGather", "bool_gather", (Input("input"), MASK), (), bool_gather,
          Needs(inputs=("mask",)), outputs=(Output("output"),), dynamic_shape=True,
          sized_by=("mask",),
          doc="input[mask != 0] for a mask over input's leading axes: (nnz, ...)."),
    _spec("BoolScatter", "bool_scatter",
          (Input("input"), MASK, Input("output", optional=True)), (), bool_scatter,
          Needs(inputs=("mask",)), mutates=("output",),
          doc="Writes the rows of input where mask != 0 into zeros or, in place, into "
              "`output`: the inverse of bool_gather."),
    _spec("BoolFill", "bool_fill", (Input("data"), MASK), (Arg("value", "float", 0),),
          bool_fill, Needs(inputs=("mask",)),
          doc="data with `value` where the (broadcast) mask is non-zero."),
    _spec("PackPaddedSequence", "pack_padded_sequence",
          (Input("padded_sequence"), Input("lengths", integer=True)),
          (Arg("batch_first", "bool", False),), pack_padded_sequence,
          Needs(inputs=("lengths",)),
          outputs=(Output("pack_sequence"), Output("batch_sizes", dtype=INDEX)),
          dynamic_shape=True, sized_by=("lengths",),
          doc="Packs length-sorted (decreasing) padded sequences time step by time step."),
    _spec("PadPackedSequence", "pad_packed_sequence",
          (Input("packed_sequence"), Input("batch_sizes", integer=True)),
          (Arg("batch_first", "bool", False), Arg("padding_value", "float", 0.0),
           Arg("total_length", "int", -1)), pad_packed_sequence,
          Needs(inputs=("batch_sizes",)),
          outputs=(Output("padded_sequence"), Output("lengths", dtype=INDEX)),
          dynamic_shape=True, sized_by=("batch_sizes",),
          doc="Unpacks a packed sequence into (T, B, ...) (or batch first), padded up to "
              "total_length; the inverse of pack_padded_sequence."),
    _spec("BatchCholesky", "batch_cholesky", X, (Arg("upper", "bool", False),), batch_square,
          Needs(outputs=("y",)),
          doc="Cholesky factor of each symmetric positive-definite matrix of (batch, n, n) "
              "(lower, or upper with upper=True); the gradient is symmetric."),
]
