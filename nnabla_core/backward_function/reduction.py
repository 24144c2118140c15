"""Backward functions of the reduction family (built from ``nnabla.functions``).

The gradient of a reduction over ``axes`` is the output gradient spread back
over those axes, times the local derivative: 1 (sum), 1/N (mean), a one-hot of
the arg-extreme (max, min), the product of the other elements (prod) and
``sign(x) |x|^(p-1) y^(1-p)`` (norm).
"""
from __future__ import annotations

import math

from ._shaping import blocks, detached, no_grad, normalize_axes, spread, unblock
from ._util import F


def sum_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes=None,
                 keep_dims=False):
    """dx = dy broadcast over ``axes``."""
    shape = input_shapes[0]
    return [spread(grad_outputs[0], shape, normalize_axes(axes, len(shape)))]


def mean_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes=None,
                  keep_dims=False):
    """dx = dy / N broadcast over ``axes`` (N: the number of reduced elements)."""
    shape = input_shapes[0]
    axes = normalize_axes(axes, len(shape))
    count = math.prod(shape[a] for a in axes)
    return [spread(grad_outputs[0] * (1.0 / max(count, 1)), shape, axes)]


def _extreme_backward(pick):
    """Max/Min: dy goes to the position the forward picked (the first one on ties).

    The position is recomputed as an index (no gradient) and made one-hot, so ties
    route the gradient exactly as the kernel's backward does.
    """
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes=None,
                 keep_dims=False, with_index=False, only_index=False):
        if only_index:
            return [None]
        shape = input_shapes[0]
        axes = normalize_axes(axes, len(shape))
        matrix, perm = blocks(detached(inputs[0]), shape, axes)
        rows, cols = matrix.shape
        index = no_grad(pick(matrix, axis=1, keepdims=True, only_index=True))
        mask = no_grad(F().one_hot(index, shape=(cols,)))
        dy = F().reshape(grad_outputs[0], (rows, 1), inplace=False)
        return [unblock(dy * mask, shape, perm)]
    return backward


def prod_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes=None,
                  keep_dims=False):
    """dx_i = dy * prod_{j != i} x_j, from exclusive products of both ends (exact at zeros)."""
    shape = input_shapes[0]
    axes = normalize_axes(axes, len(shape))
    matrix, perm = blocks(inputs[0], shape, axes)
    left = F().cumprod(matrix, axis=1, exclusive=True)
    right = F().cumprod(matrix, axis=1, exclusive=True, reverse=True)
    others = unblock(left * right, shape, perm)
    return [spread(grad_outputs[0], shape, axes) * others]


def _sign(x):
    """sign(x) (0 at 0) as a constant mask: its derivative is zero almost everywhere."""
    x = detached(x)
    return no_grad(F().greater_scalar(x, 0.0) - F().less_scalar(x, 0.0))


def norm_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, p=2.0, axes=None,
                  keep_dims=False):
    """dx = dy * sign(x) |x|^(p-1) y^(1-p), with y the norm (x / y when p = 2)."""
    x, shape = inputs[0], input_shapes[0]
    axes = normalize_axes(axes, len(shape))
    p = 2.0 if p is None else float(p)
    dy = grad_outputs[0]
    if p == 1.0:
        return [spread(dy, shape, axes) * _sign(x)]
    y = outputs[0]
    if p == 2.0:
        return [spread(dy / y, shape, axes) * x]
    scale = spread(dy * F().pow_scalar(y, 1.0 - p), shape, axes)
    return [scale * _sign(x) * F().pow_scalar(F().abs(x), p - 1.0)]


def reduce_sum_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy everywhere."""
    shape = input_shapes[0]
    return [spread(grad_outputs[0], shape, list(range(len(shape))))]


def reduce_mean_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy / N everywhere."""
    shape = input_shapes[0]
    scale = 1.0 / max(math.prod(shape), 1)
    return [spread(grad_outputs[0] * scale, shape, list(range(len(shape))))]


BACKWARDS = {
    "Sum": sum_backward, "Mean": mean_backward,
    "Max": _extreme_backward(lambda x, **kw: F().max(x, **kw)),
    "Min": _extreme_backward(lambda x, **kw: F().min(x, **kw)),
    "Prod": prod_backward, "Norm": norm_backward,
    "ReduceSum": reduce_sum_backward, "ReduceMean": reduce_mean_backward,
}
