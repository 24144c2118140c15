"""Array manipulation: joining, splitting, slicing, padding, reshaping and indexing.

Shape rules here validate their arguments and raise errors naming the function,
the argument, the expectation and the value given. Axes may be negative; the
kernels normalise them the same way. Input-dependent defaults (the last axis,
full-range slices) are ``None`` in the spec and filled by the ``_resolve_*``
functions.
"""
from __future__ import annotations

import math

from .args import check_axes, check_axis, check_nonnegative, check_positive
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Array Manipulation"
X = (Input("x"),)
Y = (Output("y"),)


def _fill(name, value_of):
    """A resolver setting argument ``name`` to ``value_of(in_shapes)`` when it is None."""
    def resolve(spec, in_shapes, args):
        if args.get(name) is not None:
            return args
        return {**args, name: value_of(in_shapes)}
    return resolve


def _resolve_slice(spec, in_shapes, args):
    """Fill omitted start/stop/step; shorter lists apply to the trailing axes (as nnabla)."""
    x = tuple(in_shapes[0])
    full = {"start": (0,) * len(x), "stop": x, "step": (1,) * len(x)}
    given = [(name, args[name]) for name in full if args.get(name) is not None]
    for name, values in given[1:]:
        if len(values) != len(given[0][1]):
            raise spec.value_error(name, f"{len(given[0][1])} values, as many as "
                                   f"'{given[0][0]}' {tuple(given[0][1])}", values)
    out = dict(args)
    for name, default in full.items():
        given = args.get(name)
        if given is None:
            out[name] = default
        elif len(given) > len(x):
            raise spec.value_error(name, f"at most {len(x)} values", given,
                                   why=f"x has shape {x}")
        else:
            out[name] = default[:len(x) - len(given)] + tuple(given)
    # None items, as nnabla's F.slice reads them: the axis' full range in the step's direction
    steps = tuple(1 if s is None else s for s in out["step"])
    out["start"] = tuple((-1 if c < 0 else 0) if a is None else a
                         for a, c in zip(out["start"], steps))
    out["stop"] = tuple((-n - 1 if c < 0 else n) if b is None else b
                        for b, c, n in zip(out["stop"], steps, x))
    out["step"] = steps
    return out


def _resolve_shift(spec, in_shapes, args):
    ndim = len(in_shapes[0])
    shifts = tuple(args["shifts"] or ())
    if len(shifts) > ndim:
        raise spec.value_error("shifts", f"at most {ndim} values", shifts)
    return {**args, "shifts": (0,) * (ndim - len(shifts)) + shifts}


# --------------------------------------------------------------------- shape rules
def concatenate(spec, *xs, axis):
    if not xs:
        raise spec.value_error("x", "at least one input", 0)
    first = tuple(xs[0])
    ax = check_axis(spec, "axis", axis, len(first))
    size = 0
    for i, s in enumerate(xs):
        s = tuple(s)
        if len(s) != len(first) or any(a != b for j, (a, b) in enumerate(zip(s, first))
                                       if j != ax):
            raise spec.shape_error(f"x[{i}]", f"the shape of x[0] {first} except along "
                                   f"axis {axis}", s, why="inputs are joined along 'axis' only")
        size += s[ax]
    return (first[:ax] + (size,) + first[ax + 1:],)


def split(spec, x, *, axis):
    ax = check_axis(spec, "axis", axis, len(x))
    part = tuple(x[:ax]) + tuple(x[ax + 1:])
    return (part,) * x[ax]


def stack(spec, *xs, axis):
    if not xs:
        raise spec.value_error("x", "at least one input", 0)
    first = tuple(xs[0])
    ax = check_axis(spec, "axis", axis, len(first), allow_end=True)
    for i, s in enumerate(xs):
        if tuple(s) != first:
            raise spec.shape_error(f"x[{i}]", f"the shape of x[0] {first}", s,
                                   why="stacked inputs must have equal shapes")
    return (first[:ax] + (len(xs),) + first[ax:],)


def slice_(spec, x, *, start, stop, step):
    for name, values in (("stop", stop), ("step", step)):
        if len(values) != len(start):
            raise spec.value_error(name, f"{len(start)} values like 'start'", values)
    if 0 in step:
        raise spec.value_error("step", "non-zero steps", step)
    return (tuple(len(range(*slice(a, b, c).indices(n)))
                  for n, a, b, c in zip(x, start, stop, step)),)


def pad(spec, x, *, pad_width, mode, constant_value):
    if len(pad_width) % 2 or len(pad_width) > 2 * len(x):
        raise spec.value_error("pad_width", f"an even number of values, at most {2 * len(x)}",
                               pad_width, why=f"(before, after) pairs for the last axes of "
                                              f"x {tuple(x)}")
    check_nonnegative(spec, "pad_width", pad_width)
    lead = len(x) - len(pad_width) // 2
    out = list(x)
    for i in range(len(pad_width) // 2):
        if mode == "reflect" and x[lead + i] == 0 and pad_width[2 * i] + pad_width[2 * i + 1]:
            raise spec.value_error("mode", "'constant' for an empty axis", mode)
        out[lead + i] += pad_width[2 * i] + pad_width[2 * i + 1]
    return (tuple(out),)


def transpose(spec, x, *, axes):
    if len(axes) != len(x):
        raise spec.value_error("axes", f"a permutation of {len(x)} axes", axes,
                               why=f"x has shape {tuple(x)}")
    axes = check_axes(spec, "axes", axes, len(x))
    return (tuple(x[a] for a in axes),)


def reshape(spec, x, *, shape, inplace=True):
    size = math.prod(x)
    unknown = [i for i, s in enumerate(shape) if s < 0]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise spec.value_error("shape", "non-negative sizes and at most one -1", shape)
    known = math.prod(s for s in shape if s >= 0)
    if unknown:
        if known == 0 or size % known:
            raise spec.value_error("shape", f"a shape of size {size} (the size of x "
                                   f"{tuple(x)})", shape, why=f"{size} is not a multiple of "
                                                          f"{known}")
        shape = tuple(size // known if s < 0 else s for s in shape)
    elif known != size:
        raise spec.value_error("shape", f"a shape of size {size} (the size of x {tuple(x)})",
                               shape, why=f"its size is {known}")
    return (tuple(shape),)


def broadcast(spec, x, *, shape):
    check_nonnegative(spec, "shape", shape)
    x = tuple(x)
    if len(x) > len(shape) or any(a not in (1, b) for a, b in zip(x[::-1], shape[::-1])):
        raise spec.value_error("shape", f"a shape that x {x} broadcasts to", tuple(shape),
                               why="each trailing axis of x must equal it or be 1")
    return (tuple(shape),)


def broadcast_to(spec, x, y, *, axis):
    x, y = tuple(x), tuple(y)
    if len(y) > len(x):
        raise spec.shape_error("y", f"at most {len(x)} dimensions (x is {x})", y)
    start = len(x) - len(y) if axis < 0 else axis
    if start + len(y) > len(x) or x[start:start + len(y)] != y:
        raise spec.shape_error("y", f"x.shape[{start}:{start + len(y)}] = "
                               f"{x[start:start + len(y)]} (x is {x}, axis={axis})", y)
    return (x,)


def tile(spec, x, *, reps):
    check_positive(spec, "reps", reps)
    n = max(len(x), len(reps))
    x = (1,) * (n - len(x)) + tuple(x)
    reps = (1,) * (n - len(reps)) + tuple(reps)
    return (tuple(a * r for a, r in zip(x, reps)),)


def flip(spec, x, *, axes):
    check_axes(spec, "axes", axes, len(x))
    return (tuple(x),)


def one_hot(spec, x, *, shape):
    if not x or x[-1] != len(shape):
        raise spec.shape_error("x", f"(..., {len(shape)}): one index per axis of "
                               f"shape {tuple(shape)}", x)
    check_positive(spec, "shape", shape)
    return (tuple(x[:-1]) + tuple(shape),)


def shift(spec, x, *, shifts, border_mode):
    return (tuple(x),)


def sort(spec, x, *, axis, reverse, with_index, only_index):
    check_axis(spec, "axis", axis, len(x))
    n = 2 if with_index and not only_index else 1
    return (tuple(x),) * n


def _square(spec, x, name="x"):
    if len(x) < 2 or x[-1] != x[-2]:
        raise spec.shape_error(name, "(..., n, n): a batch of square matrices", x)


def matrix_diag(spec, x):
    if not x:
        raise spec.shape_error("x", "at least one dimension", x)
    return (tuple(x) + (x[-1],),)


def matrix_diag_part(spec, x):
    _square(spec, x)
    return (tuple(x[:-1]),)


def trilu(spec, x, *, k, upper):
    if len(x) < 2:
        raise spec.shape_error("x", "(..., m, n): at least two dimensions", x)
    return (tuple(x),)


def meshgrid(spec, *xs, ij_indexing):
    for i, s in enumerate(xs):
        if len(s) != 1:
            raise spec.shape_error(f"x[{i}]", "a 1-D array", s)
    sizes = [s[0] for s in xs]
    if not ij_indexing and len(sizes) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    return (tuple(sizes),) * len(xs)


def batch_square(spec, x, *rest, **args):
    if len(x) != 3 or x[1] != x[2]:
        raise spec.shape_error("x", "(batch, n, n)", x)
    return (tuple(x),)


def batch_scalar(spec, x):
    batch_square(spec, x)
    return ((x[0],),)


def gather(spec, x, indices, *, axis, batch_dims):
    ax = check_axis(spec, "axis", axis, len(x))
    if not 0 <= batch_dims <= min(ax, len(indices)):
        raise spec.value_error("batch_dims", f"in [0, min(axis, Indices.ndim)] = "
                               f"[0, {min(ax, len(indices))}]", batch_dims)
    if tuple(indices[:batch_dims]) != tuple(x[:batch_dims]):
        raise spec.shape_error("Indices", f"leading batch axes {tuple(x[:batch_dims])} like x",
                               indices)
    return (tuple(x[:ax]) + tuple(indices[batch_dims:]) + tuple(x[ax + 1:]),)


def gather_nd(spec, x, indices):
    if not indices or indices[0] > len(x):
        raise spec.shape_error("indices", f"(m, ...) with m <= x.ndim = {len(x)}", indices)
    return (tuple(indices[1:]) + tuple(x[indices[0]:]),)


def scatter_nd(spec, data, indices, out, *, shape, add):
    target = tuple(out) if out is not None else shape
    if target is None:
        raise spec.value_error("shape", "a shape when 'out' is not given", None)
    if not indices or indices[0] > len(target):
        raise spec.shape_error("indices", f"(m, ...) with m <= {len(target)}", indices)
    expected = tuple(indices[1:]) + tuple(target[indices[0]:])
    if tuple(data) != expected:
        raise spec.shape_error("data", expected, data,
                               why="indices.shape[1:] + shape[indices.shape[0]:]")
    return (tuple(target),)


def scatter_add(spec, x0, indices, x1, *, axis):
    ax = check_axis(spec, "axis", axis, len(x0))
    if not len(x0) == len(indices) == len(x1):
        raise spec.shape_error("indices", f"{len(x0)} dimensions like x0 {tuple(x0)}", indices)
    for i, (a, b, c) in enumerate(zip(x0, indices, x1)):
        if b > c or (i != ax and b > a):
            raise spec.shape_error("indices", f"sizes <= x1 {tuple(x1)} and <= x0 {tuple(x0)} "
                                   f"off axis {ax}", indices)
    return (tuple(x0),)


def shape_range(ndim, start, end):
    """The axes [start, end) that Shape reports; end == 0 means the last axis included."""
    start = min(max(start + ndim if start < 0 else start, 0), ndim)
    end = ndim if end == 0 else min(max(end + ndim if end < 0 else end, 0), ndim)
    return start, max(start, end)


def shape(spec, x, *, start, end):
    a, b = shape_range(len(x), start, end)
    return ((b - a,),)


def assign(spec, dst, src):
    if tuple(dst) != tuple(src):
        raise spec.shape_error("src", f"the shape of dst {tuple(dst)}", src)
    return (tuple(dst),)


# --------------------------------------------------------------------------- table
NO_NEEDS = Needs()


def _spec(name, snake, inputs, args, infer, needs=NO_NEEDS, outputs=Y, **kw):
    return FunctionSpec(name, snake, CATEGORY, inputs, args, outputs, infer, needs, **kw)


_LAST_AXIS = _fill("axis", lambda shapes: len(shapes[0]) - 1)
_ZERO = {name: _fill(name, lambda shapes: 0) for name in ("axis", "batch_dims")}


def _chain(*resolvers):
    def resolve(spec, in_shapes, args):
        for r in resolvers:
            args = r(spec, in_shapes, args)
        return args
    return resolve


SPECS = [
    _spec("Concatenate", "concatenate", (Input("x", variadic=True),),
          (Arg("axis", "int?", None),), concatenate, resolve_args=_LAST_AXIS,
          doc="Joins the inputs along an existing axis (default: the last one)."),
    _spec("Split", "split", X, (Arg("axis", "int", 0),), split,
          outputs=(Output("y", variadic=True),),
          doc="Splits x into x.shape[axis] arrays, removing that axis."),
    _spec("Stack", "stack", (Input("x", variadic=True),), (Arg("axis", "int", 0),), stack,
          doc="Joins equally shaped inputs along a new axis."),
    _spec("Slice", "slice", X, (Arg("start", "optints?", None),
                                Arg("stop", "optints?", None),
                                Arg("step", "optints?", None)), slice_,
          resolve_args=_resolve_slice,
          doc="Python-style slice x[start:stop:step] on each axis; None is the full range."),
    _spec("Pad", "pad", X, (Arg("pad_width", "ints"),
                            Arg("mode", "str", "constant", ("constant", "reflect", "repeat")),
                            Arg("constant_value", "float", 0)), pad,
          doc="Pads the last len(pad_width)//2 axes by (before, after) pairs."),
    _spec("Transpose", "transpose", X, (Arg("axes", "ints"),), transpose,
          doc="Permutes the axes: y.shape[i] = x.shape[axes[i]]."),
    _spec("Reshape", "reshape", X, (Arg("shape", "ints"), Arg("inplace", "bool", True)),
          reshape, doc="Gives x a new shape of the same size; one entry may be -1."),
    _spec("Broadcast", "broadcast", X, (Arg("shape", "ints"),), broadcast,
          doc="Broadcasts x to `shape` (trailing alignment; size-1 axes repeat)."),
    _spec("BroadcastTo", "broadcast_to", (Input("x"), Input("y")),
          (Arg("axis", "int?", None),), broadcast_to,
          resolve_args=_fill("axis", lambda shapes: -1), differentiable=False,
          doc="Broadcasts y to the shape of x, y's axes matching x's from `axis` on "
              "(-1: trailing)."),
    _spec("Tile", "tile", X, (Arg("reps", "ints"),), tile,
          doc="Repeats x reps[i] times along each axis (as numpy.tile)."),
    _spec("Flip", "flip", X, (Arg("axes", "ints?", None),), flip,
          resolve_args=_fill("axes", lambda shapes: (len(shapes[0]) - 1,)),
          doc="Reverses x along `axes` (default: the last axis)."),
    _spec("OneHot", "one_hot", (Input("x", integer=True),), (Arg("shape", "ints"),), one_hot,
          differentiable=False,
          doc="One-hot encoding: x (..., N) of indices into an N-D `shape` gives "
              "(..., *shape) float32 with a single 1 per index tuple."),
    _spec("Shift", "shift", X, (Arg("shifts", "ints?", None),
                                Arg("border_mode", "str", "nearest", ("nearest", "reflect"))),
          shift, resolve_args=_resolve_shift,
          doc="y[i] = x[i - shifts]; outside indices take the nearest or mirrored value."),
    _spec("Sort", "sort", X, (Arg("axis", "int", -1), Arg("reverse", "bool", False),
                              Arg("with_index", "bool", False),
                              Arg("only_index", "bool", False)), sort,
          # The outputs are (y,), (y, indices) or, with only_index, (indices,); the kernel
          # returns that last one as uint64 and integer outputs keep their dtype.
          outputs=(Output("y"), Output("indices", dtype="uint64")),
          doc="Stable sort along `axis`; outputs the values and/or the sorting indices."),
    _spec("MatrixDiag", "matrix_diag", X, (), matrix_diag,
          doc="Makes diagonal matrices from the last axis: (..., n) -> (..., n, n)."),
    _spec("MatrixDiagPart", "matrix_diag_part", X, (), matrix_diag_part,
          doc="Takes the diagonals of square matrices: (..., n, n) -> (..., n)."),
    _spec("Trilu", "trilu", X, (Arg("k", "int", 0), Arg("upper", "bool", True)), trilu,
          doc="Keeps the upper (j - i >= k) or lower (j - i <= k) triangle of the last two "
              "axes and zeroes the rest."),
    _spec("Meshgrid", "meshgrid", (Input("x", variadic=True),),
          (Arg("ij_indexing", "bool", False),), meshgrid,
          outputs=(Output("y", variadic=True),),
          doc="Coordinate grids from 1-D inputs ('xy' indexing unless ij_indexing)."),
    _spec("BatchDet", "batch_det", X, (), batch_scalar, Needs(inputs=("x",), outputs=("y",)),
          doc="Determinant of each matrix of a (batch, n, n) array."),
    _spec("BatchInv", "batch_inv", X, (), batch_square, Needs(outputs=("y",)),
          doc="Inverse of each matrix of a (batch, n, n) array."),
    _spec("BatchLogdet", "batch_logdet", X, (), batch_scalar, Needs(inputs=("x",)),
          doc="Log-determinant of each matrix of a (batch, n, n) array."),
    _spec("Gather", "gather", (Input("x"), Input("Indices", integer=True)),
          (Arg("axis", "int?", None), Arg("batch_dims", "int?", None)), gather,
          Needs(inputs=("Indices",)),
          resolve_args=_chain(_ZERO["axis"], _ZERO["batch_dims"]),
          doc="Takes slices of x along `axis` at `Indices` (batched over the first "
              "batch_dims axes)."),
    _spec("GatherNd", "gather_nd", (Input("x"), Input("indices", integer=True)), (),
          gather_nd, Needs(inputs=("indices",)),
          doc="y[...] = x[indices[0, ...], ..., indices[m-1, ...]]."),
    _spec("ScatterNd", "scatter_nd", (Input("data"), Input("indices", integer=True),
                                      Input("out", optional=True)),
          (Arg("shape", "ints?", None), Arg("add", "bool", False)), scatter_nd,
          Needs(inputs=("indices",)), mutates=("out",),
          doc="Inverse of gather_nd: writes (or adds) data at indices into zeros or `out`."),
    _spec("ScatterAdd", "scatter_add", (Input("x0"), Input("indices", integer=True),
                                        Input("x1")),
          (Arg("axis", "int?", None),), scatter_add, Needs(inputs=("indices",)),
          resolve_args=_ZERO["axis"],
          doc="Adds x1 into a copy of x0 at `indices` along `axis`."),
    _spec("Shape", "shape", X, (Arg("start", "int?", None), Arg("end", "int?", None)), shape,
          resolve_args=_chain(_fill("start", lambda shapes: 0), _fill("end", lambda shapes: 0)),
          differentiable=False,
          doc="The sizes of x's axes [start, end) as a float array (end=0: to the last)."),
    _spec("Assign", "assign", (Input("dst"), Input("src")), (), assign, mutates=("dst",),
          doc="Copies src into dst (in place) and outputs it."),
]
