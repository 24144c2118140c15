"""Helpers of the reduction and array backward functions: constants, spreading, index maps.

Everything here depends only on shapes and arguments (known when the gradient
graph is built), except the ``F`` calls, which put the gradient into the graph.
Index maps are numpy arrays; :func:`scatter_back` turns a per-axis map into the
transpose of the gather it describes, so a backward function whose forward is
"pick ``x`` at these positions" (slice, pad, shift) gets a differentiable
adjoint from one ``scatter_nd``.
"""
from __future__ import annotations

import math

import numpy as np

from ._util import F


def constant(array):
    """A Variable holding ``array`` that takes no gradient."""
    import nnabla as nn
    return nn.Variable.from_numpy_array(np.asarray(array), need_grad=False)


def no_grad(x):
    """``x`` marked as taking no gradient: an index or mask that backward passes stop at."""
    return x.apply(need_grad=False)


def detached(x):
    """The values of ``x`` cut from the graph (``F.unlink``), to compute masks and indices from.

    Neither ``nn.grad`` nor a backward pass goes through it, so comparisons and
    arg-reductions built on it are never asked for a gradient (they have none).
    """
    return F().unlink(x)


def zeros(shape):
    """A float zeros Variable of ``shape`` (the gradient of an unused output)."""
    return constant(np.zeros(tuple(shape), dtype=np.float32))


def normalize_axes(axes, ndim):
    """``axes`` as non-negative ints; ``None`` means every axis."""
    if axes is None:
        return list(range(ndim))
    axes = [axes] if isinstance(axes, int) else list(axes)
    return [a % ndim if ndim else a for a in axes]


def kept_shape(shape, axes):
    """``shape`` with the reduced ``axes`` set to 1 (the ``keep_dims`` shape)."""
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def spread(g, shape, axes):
    """Broadcast a gradient reduced over ``axes`` back to ``shape``.

    Args:
        g (Variable): gradient of the reduced output (keep_dims or not).
        shape (tuple of int): the shape before the reduction.
        axes (list of int): the reduced axes.
    """
    kept = kept_shape(shape, axes)
    if tuple(g.shape) != kept:
        g = F().reshape(g, kept, inplace=False)
    if kept == tuple(shape):
        return g
    return F().broadcast(g, tuple(shape))


def sum_to(g, shape):
    """Sum ``g`` down to ``shape`` (undo a numpy-style broadcast, leading axes included)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    axes = list(range(lead)) + [lead + i for i, s in enumerate(shape)
                                if s == 1 and g.shape[lead + i] != 1]
    if axes:
        g = F().sum(g, axis=axes, keepdims=True)
    return F().reshape(g, shape, inplace=False)


def inverse_permutation(perm):
    """The axes that undo ``transpose(x, perm)``."""
    return [int(i) for i in np.argsort(perm)]


def transpose(x, perm):
    """``F.transpose`` that skips the identity permutation."""
    perm = list(perm)
    return x if perm == list(range(len(perm))) else F().transpose(x, perm)


def blocks(x, shape, axes):
    """``x`` as a (kept, reduced) matrix: the reduced ``axes`` moved last and merged.

    Returns:
        (Variable, list of int): the matrix and the permutation used.
    """
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = kept + list(axes)
    rows = math.prod(shape[i] for i in kept)
    cols = math.prod(shape[a] for a in axes)
    return F().reshape(transpose(x, perm), (rows, cols), inplace=False), perm


def unblock(m, shape, perm):
    """Undo :func:`blocks`: back to ``shape`` from the (kept, reduced) matrix ``m``."""
    permuted = tuple(shape[p] for p in perm)
    return transpose(F().reshape(m, permuted, inplace=False), inverse_permutation(perm))


def grid_index(maps):
    """The ``gather_nd`` index of a separable map: ``index[:, i...] = (maps[0][i0], ...)``."""
    grids = np.meshgrid(*[np.asarray(m, dtype=np.int64) for m in maps], indexing="ij")
    return np.stack(grids) if grids else np.zeros((0,), np.int64)


def scatter_back(g, maps, shape):
    """Transpose of ``y = x[maps[0]][:, maps[1]]...`` (one source index per output position).

    Args:
        g (Variable): gradient of y, shape ``(len(maps[0]), len(maps[1]), ...)``.
        maps (list of sequences of int): per axis, the source index of each output position.
        shape (tuple of int): the shape of x.

    Returns:
        Variable of ``shape``; repeated sources add up.
    """
    index = constant(grid_index(maps))
    return F().scatter_nd(g, index, shape=list(shape), add=True)


def slice_maps(shape, start, stop, step):
    """Per axis, the positions ``x[start:stop:step]`` reads."""
    return [list(range(*slice(a, b, c).indices(n)))
            for n, a, b, c in zip(shape, start, stop, step)]


def reflect_map(pos, n):
    """Mirror positions into [0, n) without repeating the edge (nnabla's ``reflect``)."""
    if n == 1:
        return np.zeros_like(pos)
    m = pos % (2 * n - 2)
    return np.where(m < n, m, 2 * n - 2 - m)


def symmetric_map(pos, n):
    """Mirror positions into [0, n) repeating the edge (Shift's ``reflect`` border)."""
    m = pos % (2 * n)
    return np.where(m < n, m, 2 * n - 1 - m)
