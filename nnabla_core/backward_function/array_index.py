"""Backward functions of the index-taking array functions: gather, scatter and sort.

Gathers and scatters are each other's transposes: the gradient of a gather
scatters-adds ``dy`` back to where it was read, and the gradient of a scatter
gathers ``dy`` from where it was written. Integer inputs get no gradient.
"""
from __future__ import annotations

import numpy as np

from ._shaping import constant, detached, no_grad, transpose, zeros
from ._util import F


def _index_rows(indices, shape, axis, batch_dims):
    """A ``gather_nd`` index (batch_dims + 1, *shape): batch positions, then ``indices``.

    Args:
        indices (Variable): the integer indices, of ``shape``.
        shape (tuple of int): the shape of ``indices``.
        axis (int or None): with ``batch_dims=None``, every position of ``shape``
            except ``axis``, which reads ``indices`` (a full per-element index).
        batch_dims (int or None): the number of leading positions taken as is.
    """
    own = no_grad(F().reshape(indices, (1,) + tuple(shape), inplace=False))
    grid = np.indices(shape, dtype=np.float32)
    if batch_dims is not None:
        if batch_dims == 0:
            return own
        return F().concatenate(constant(grid[:batch_dims]), own, axis=0)
    rows = []
    if axis > 0:
        rows.append(constant(grid[:axis]))
    rows.append(own)
    if axis + 1 < len(shape):
        rows.append(constant(grid[axis + 1:]))
    return rows[0] if len(rows) == 1 else F().concatenate(*rows, axis=0)


def gather_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=None,
                    batch_dims=None):
    """dx = dy added back at the gathered positions.

    With x = (B, P, a, Q) (batch, axes before ``axis``, ``axis``, after) and
    Indices = (B, J), dy = (B, P, J, Q) is moved to (B, J, P, Q) and scattered
    into (B, a, P, Q) at (batch position, Indices), then moved to x's order.
    """
    x_shape, idx_shape = tuple(input_shapes[0]), tuple(input_shapes[1])
    ndim = len(x_shape)
    axis = (axis or 0) % ndim
    b = batch_dims or 0
    n_pre, n_idx = axis - b, len(idx_shape) - b
    batch, pre = list(range(b)), list(range(b, axis))
    gathered = list(range(axis, axis + n_idx))
    after = list(range(axis + n_idx, ndim - 1 + n_idx))
    data = transpose(grad_outputs[0], batch + gathered + pre + after)
    index = _index_rows(inputs[1], idx_shape, None, b)
    target = x_shape[:b] + (x_shape[axis],) + x_shape[b:axis] + x_shape[axis + 1:]
    moved = F().scatter_nd(data, index, shape=list(target), add=True)
    back = list(range(b)) + list(range(b + 1, b + 1 + n_pre)) + [b] + \
        list(range(b + 1 + n_pre, ndim))
    return [transpose(moved, back), None]


def gather_nd_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy scatter-added at ``indices``."""
    dx = F().scatter_nd(grad_outputs[0], inputs[1], shape=list(input_shapes[0]), add=True)
    return [dx, None]


def scatter_nd_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                        shape=None, add=False):
    """d data = dy gathered at ``indices``; ``out`` takes no gradient (as the kernel)."""
    grads = [F().gather_nd(grad_outputs[0], inputs[1]), None]
    if len(inputs) > 2 and inputs[2] is not None:
        grads.append(None)
    return grads


def scatter_add_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                         axis=None):
    """dx0 = dy; dx1 = dy read where x1 was added (zeros where x1 reaches beyond indices)."""
    dy = grad_outputs[0]
    x1_shape, idx_shape = tuple(input_shapes[2]), tuple(input_shapes[1])
    axis = (axis or 0) % dy.ndim
    index = _index_rows(inputs[1], idx_shape, axis, None)
    dx1 = F().gather_nd(dy, index)
    if idx_shape != x1_shape:
        widths = [w for n, m in zip(idx_shape, x1_shape) for w in (0, m - n)]
        dx1 = F().pad(dx1, widths, mode="constant", constant_value=0)
    return [dy, None, dx1]


def sort_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=-1,
                  reverse=False, with_index=False, only_index=False):
    """dx = dy put back where each sorted value came from (the sorting index, no gradient)."""
    if only_index:
        return [None]
    shape = tuple(input_shapes[0])
    axis = axis % len(shape)
    order = no_grad(F().sort(detached(inputs[0]), axis=axis, reverse=reverse, only_index=True))
    return [F().scatter_add(zeros(shape), order, grad_outputs[0], axis=axis)]


BACKWARDS = {
    "Gather": gather_backward, "GatherNd": gather_nd_backward,
    "ScatterNd": scatter_nd_backward, "ScatterAdd": scatter_add_backward,
    "Sort": sort_backward,
}
