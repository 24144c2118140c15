"""Cases of the reduction functions, with independent numpy references."""
import numpy as np

from .case import Case, Fixed, Normal, Positive

S = (2, 3, 4)
# Distinct values, spaced well above the finite-difference step, so max/min have no ties.
DISTINCT = Fixed(np.random.RandomState(7).permutation(24).reshape(S) * 0.1 - 1.2)


def _axis(axes):
    return None if axes is None else tuple(axes)


def ref_sum(x, axes=None, keep_dims=False):
    return np.sum(x, axis=_axis(axes), keepdims=keep_dims)


def ref_mean(x, axes=None, keep_dims=False):
    return np.mean(x, axis=_axis(axes), keepdims=keep_dims)


def ref_prod(x, axes=None, keep_dims=False):
    return np.prod(x, axis=_axis(axes), keepdims=keep_dims)


def ref_norm(x, p=2.0, axes=None, keep_dims=False):
    return np.sum(np.abs(x) ** p, axis=_axis(axes), keepdims=keep_dims) ** (1.0 / p)


def _extreme(pick, argpick):
    """Reference of Max/Min: value and flat index over the reduced axes (in given order)."""
    def ref(x, axes=None, keep_dims=False, with_index=False, only_index=False):
        axes = list(range(x.ndim)) if axes is None else [a % x.ndim for a in axes]
        kept = [i for i in range(x.ndim) if i not in axes]
        # The index numbers the reduced block in ascending axis order, whatever the order
        # of `axes` (nnabla 1.39 gives [6, 1, 2] for Max-index-order's input).
        moved = np.transpose(x, kept + sorted(axes))
        flat = moved.reshape([x.shape[i] for i in kept] + [-1])
        out_shape = [1 if i in axes else x.shape[i] for i in range(x.ndim)] if keep_dims \
            else [x.shape[i] for i in kept]
        y = pick(flat, axis=-1).reshape(out_shape)
        idx = argpick(flat, axis=-1).reshape(out_shape)
        if only_index:
            return idx
        return (y, idx) if with_index else y
    return ref


ref_max = _extreme(np.max, np.argmax)
ref_min = _extreme(np.min, np.argmin)


def _axes_variants(name, ref, gen=Normal(S), **kw):
    return [
        Case(name, [gen], {}, ref=ref, id="all", **kw),
        Case(name, [gen], {"axes": [1]}, ref=ref, id="axis1", **kw),
        Case(name, [gen], {"axes": [0, 2], "keep_dims": True}, ref=ref, id="keep", **kw),
        Case(name, [gen], {"axes": [-1]}, ref=ref, id="negative", **kw),
        Case(name, [gen], {"axes": [], "keep_dims": False}, ref=ref, id="none", **kw),
    ]


def _extreme_cases(name, ref):
    return [
        *_axes_variants(name, ref, DISTINCT),
        Case(name, [DISTINCT], {"axes": [2, 0], "with_index": True}, ref=ref, id="index-order"),
        Case(name, [DISTINCT], {"axes": [1], "keep_dims": True, "with_index": True}, ref=ref,
             id="with-index"),
        Case(name, [DISTINCT], {"axes": [0, 1], "only_index": True}, ref=ref, grad=False,
             id="only-index"),
        Case(name, [DISTINCT], {"with_index": True}, ref=ref, id="all-with-index"),
    ]


HAS_ZERO = Fixed(np.array([[0.5, 0.0, -1.5, 2.0], [1.25, -0.75, 0.0, 0.0]]))

CASES = [
    *_axes_variants("Sum", ref_sum),
    *_axes_variants("Mean", ref_mean),
    *_extreme_cases("Max", ref_max),
    *_extreme_cases("Min", ref_min),
    *_axes_variants("Prod", ref_prod, Positive(S)),
    Case("Prod", [Normal(S)], {"axes": [0, 1]}, ref=ref_prod, id="signed"),
    Case("Prod", [HAS_ZERO], {"axes": [1]}, ref=ref_prod, id="zeros"),
    *_axes_variants("Norm", ref_norm, Positive(S)),
    Case("Norm", [Normal(S)], {"p": 3.0, "axes": [1, 2]}, ref=ref_norm, id="p3"),
    Case("Norm", [Normal(S)], {"p": 1.0, "axes": [0]}, ref=ref_norm, id="p1"),
    Case("Norm", [Normal(S)], {"keep_dims": True}, ref=ref_norm, id="all-keep"),
    Case("ReduceSum", [Normal(S)], ref=lambda x: np.sum(x)),
    Case("ReduceMean", [Normal(S)], ref=lambda x: np.mean(x)),
]
