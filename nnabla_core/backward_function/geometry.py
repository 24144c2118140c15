"""Backward functions of the geometric layers (affine_grid, warp_by_grid, warp_by_flow).

nnabla has no backward functions for these (they raise); ours are exact:

- ``AffineGrid`` is linear in ``theta``: ``dtheta = AffineGridDataGrad(dy)``, the kernel's
  own transpose (see :mod:`._grad_function`), whose gradient is ``F.affine_grid`` again.
- The warps sample their input at positions computed from the grid or flow. Their
  backward functions rebuild the sampling from ``nnabla.functions`` (see
  :mod:`._composite`): corner indices and masks come from the positions' values cut
  from the graph (``F.unlink``), the corner weights and the padding folds stay in it,
  and ``F.gather_nd`` reads the corners. ``nn.grad`` of that composition is the
  gradient, differentiable to any order.
"""
from __future__ import annotations

import itertools

import numpy as np

from ._composite import composite_backward
from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._shaping import constant, detached
from ._util import F


class AffineGridDataGrad(DataGrad):
    """dtheta of ``F.affine_grid`` from ``dy``; set ``xshape`` (theta's shape), then call it.

    Args:
        ctx (Context): the context.
        size, align_corners: as ``F.affine_grid``'s.
    """

    type_name = "AffineGrid"


def _affine_grid(x, **args):
    return F().affine_grid(x, **args)


# ------------------------------------------------------------------ sampling
def _batch_index(batch, out_shape):
    """The batch number of every sampled position, (batch, *out_shape), as a constant."""
    index = np.arange(batch).reshape((batch,) + (1,) * len(out_shape))
    return constant(np.broadcast_to(index, (batch,) + tuple(out_shape)).astype(np.float32))


def _gather(image, batch_index, indices):
    """``image`` (B, *sizes, C) at integer-valued positions (one (B, *out) per axis)."""
    return F().gather_nd(image, F().stack(batch_index, *indices, axis=0))


def _inside(index, size):
    """1 where the integer-valued ``index`` lies in [0, size), else 0 (no gradient)."""
    return F().greater_equal_scalar(index, 0) * F().less_scalar(index, size)


def sample_linear(image, coords, sizes, zero_outside):
    """Multilinear sampling of ``image`` (B, *sizes, C) at float ``coords`` (per axis).

    Corners outside the image read 0 if ``zero_outside``, else the nearest border pixel.
    The weights are products of the fractional parts, which keep their gradient.
    """
    lows = [F().floor(detached(c)) for c in coords]
    fracs = [c - lo for c, lo in zip(coords, lows)]
    batch_index = _batch_index(image.shape[0], coords[0].shape[1:])
    y = None
    for corner in itertools.product((0, 1), repeat=len(coords)):
        indices, weight = [], None
        for lo, frac, step, size in zip(lows, fracs, corner, sizes):
            index = lo + step if step else lo
            factor = frac if step else 1 - frac
            if zero_outside:
                factor = factor * _inside(index, size)
            indices.append(F().clip_by_value(index, 0, size - 1))
            weight = factor if weight is None else weight * factor
        term = _gather(image, batch_index, indices) * F().reshape(weight, weight.shape + (1,))
        y = term if y is None else y + term
    return y


def sample_nearest(image, coords, sizes):
    """``image`` (B, *sizes, C) at the rounded ``coords``; 0 outside (no grid gradient)."""
    batch_index = _batch_index(image.shape[0], coords[0].shape[1:])
    indices, valid = [], None
    for c, size in zip(coords, sizes):
        index = F().floor(detached(c) + 0.5)
        inside = _inside(index, size)
        valid = inside if valid is None else valid * inside
        indices.append(F().clip_by_value(index, 0, size - 1))
    return _gather(image, batch_index, indices) * F().reshape(valid, valid.shape + (1,))


# ------------------------------------------------------------------ warp_by_grid
def _reflect(s, low, high):
    """``s`` mirrored into [low, high] as often as needed (slope +-1 where folded)."""
    length = high - low
    if length <= 0:
        return s * 0 + low
    s_value = detached(s)
    below = F().less_scalar(s_value, low)
    above = F().greater_scalar(s_value, high)
    zeros = s * 0
    distance = F().where(below, low - s, F().where(above, s - high, zeros))
    folds = F().floor(detached(distance) / length)
    rest = distance - folds * length
    odd = F().greater_scalar(folds - 2 * F().floor(folds / 2), 0.5)
    folded = F().where(below, F().where(odd, high - rest, low + rest),
                       F().where(odd, low + rest, high - rest))
    return F().where(F().logical_or(below, above), folded, s)


def source_coordinate(s, size, padding_mode, align_corners):
    """The pixel coordinate of normalised ``s`` along an axis of ``size``, with padding."""
    if align_corners:
        f = (s + 1) * ((size - 1) / 2)
    else:
        f = ((s + 1) * size - 1) / 2
    if padding_mode == "repeat":
        return F().clip_by_value(f, 0, size - 1)
    if padding_mode == "reflect" and align_corners:
        return _reflect(f, 0.0, size - 1.0)
    if padding_mode == "reflect":
        return F().clip_by_value(_reflect(2 * f, -1.0, 2 * size - 1.0) / 2, 0, size - 1)
    return f


def _channels_last(x):
    """(B, C, *spatial) -> (B, *spatial, C)."""
    return F().transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))


def _warp_by_grid(inputs, output_shapes, mode="linear", padding_mode="zero",
                  align_corners=False, channel_last=False):
    x, grid = inputs
    n = grid.shape[-1]
    image = x if channel_last else _channels_last(x)
    sizes = image.shape[1:-1]
    components = F().split(grid, axis=grid.ndim - 1)          # (x, y[, z]): last axis first
    coords = [source_coordinate(components[n - 1 - axis], size, padding_mode, align_corners)
              for axis, size in enumerate(sizes)]
    if mode == "nearest":
        y = sample_nearest(image, coords, sizes)
    else:
        y = sample_linear(image, coords, sizes, zero_outside=True)
    if not channel_last:
        y = F().transpose(y, (0, y.ndim - 1) + tuple(range(1, y.ndim - 1)))
    return [y]


# ------------------------------------------------------------------ warp_by_flow
def _warp_by_flow(inputs, output_shapes):
    data, flow = inputs
    batch, _, height, width = data.shape
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    flow_x, flow_y = F().split(flow, axis=1)
    coords = [flow_y + constant(rows[None].astype(np.float32)),
              flow_x + constant(cols[None].astype(np.float32))]
    y = sample_linear(_channels_last(data), coords, (height, width), zero_outside=False)
    return [F().transpose(y, (0, 3, 1, 2))]


BACKWARDS = {
    **unary_backwards("AffineGrid", _affine_grid, AffineGridDataGrad),
    "WarpByGrid": composite_backward(_warp_by_grid),
    "WarpByFlow": composite_backward(_warp_by_flow),
}
