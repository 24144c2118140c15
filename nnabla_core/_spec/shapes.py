"""Pure, device-free shape rules shared by many specs.

Every rule takes the spec, the input shapes (tuples) and the arguments as
keywords, and returns a tuple of output shapes.
"""
from __future__ import annotations

from .args import check_axes


def same(spec, x, *rest, **args):
    """Element-wise unary: the output has the input's shape."""
    return (tuple(x),)


def broadcast2(spec, x0, x1, **args):
    """Binary element-wise with nnabla's rule: equal ranks, size-1 axes broadcast."""
    if len(x0) != len(x1):
        raise spec.shape_error("x1", f"{len(x0)} dimensions like x0 {tuple(x0)}", x1,
                               why="binary functions broadcast only between inputs "
                                   "of the same rank")
    out = []
    for a, b in zip(x0, x1):
        if a != b and a != 1 and b != 1:
            raise spec.shape_error("x1", f"a shape broadcastable with x0 {tuple(x0)}", x1)
        out.append(b if a == 1 else a)
    return (tuple(out),)


def broadcast_n(spec, *xs, **args):
    """Variadic element-wise (add_n, mul_n): every input broadcastable together."""
    if not xs:
        raise spec.value_error("x", "at least one input", 0)
    out = tuple(xs[0])
    for x in xs[1:]:
        (out,) = broadcast2(spec, out, x)
    return (out,)


def reduced(spec, x, axes, keep_dims):
    """Shape after reducing ``axes`` (already normalised) of ``x``."""
    if keep_dims:
        return tuple(1 if i in axes else s for i, s in enumerate(x))
    return tuple(s for i, s in enumerate(x) if i not in axes)


def reduce_axes(spec, x, *rest, axes, keep_dims=False, **args):
    axes = check_axes(spec, "axes", axes, len(x))
    return (reduced(spec, x, axes, keep_dims),)


def scalar(spec, *shapes, **args):
    """A reduction to a 0-d output."""
    return ((),)
