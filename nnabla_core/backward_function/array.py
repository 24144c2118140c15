"""Backward functions of array manipulation: joining, slicing, padding, reshaping, repeating.

Each gradient is the transpose of the (linear) forward map, written with the
function that undoes it: concatenate <-> slice, split <-> stack, slice <-> pad,
transpose <-> inverse transpose, broadcast <-> sum, and for the maps that pick
elements (strided slice, reflect/repeat pad, shift) a ``scatter_nd`` whose own
backward is ``gather_nd``.
"""
from __future__ import annotations

import numpy as np

from ._shaping import (
    inverse_permutation,
    reflect_map,
    scatter_back,
    slice_maps,
    sum_to,
    symmetric_map,
    zeros,
)
from ._util import F


def concatenate_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                         axis=None):
    """dx_i = dy sliced to x_i's span along ``axis``."""
    dy = grad_outputs[0]
    ndim = dy.ndim
    axis = ndim - 1 if axis is None else axis % ndim
    grads, begin = [], 0
    for shape in input_shapes:
        start, stop = [0] * ndim, list(dy.shape)
        start[axis], stop[axis] = begin, begin + shape[axis]
        begin += shape[axis]
        grads.append(F().slice(dy, start, stop, [1] * ndim))
    return grads


def split_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=0):
    """dx = the output gradients stacked along ``axis`` (zeros for unused outputs)."""
    grads = [zeros(s) if g is None else g for g, s in zip(grad_outputs, output_shapes)]
    return [F().stack(*grads, axis=axis)]


def stack_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=0):
    """dx_i = dy split along the stacked ``axis``."""
    grads = F().split(grad_outputs[0], axis=axis)
    return list(grads) if isinstance(grads, (list, tuple)) else [grads]


def _resolved_slice(shape, start, stop, step):
    """Fill omitted start/stop/step (shorter lists apply to the trailing axes)."""
    ndim = len(shape)
    full = {"start": [0] * ndim, "stop": list(shape), "step": [1] * ndim}
    out = []
    for name, given in (("start", start), ("stop", stop), ("step", step)):
        given = list(given or [])
        out.append(full[name][:ndim - len(given)] + given)
    return out


def slice_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, start=None,
                   stop=None, step=None):
    """dx = dy put back at the sliced positions, zeros elsewhere.

    Contiguous slices pad with zeros; strided or reversed ones scatter.
    """
    shape = tuple(input_shapes[0])
    maps = slice_maps(shape, *_resolved_slice(shape, start, stop, step))
    dy = grad_outputs[0]
    if all(len(m) > 0 for m in maps) and all(list(m) == list(range(m[0], m[0] + len(m)))
                                              for m in maps):
        widths = []
        for m, n in zip(maps, shape):
            widths += [m[0], n - m[0] - len(m)]
        return [F().pad(dy, widths, mode="constant", constant_value=0)]
    return [scatter_back(dy, maps, shape)]


def pad_maps(shape, pad_width, mode):
    """Per axis, the source position of each output of a reflect/repeat pad."""
    lead = len(shape) - len(pad_width) // 2
    widths = [(0, 0)] * lead + list(zip(pad_width[::2], pad_width[1::2]))
    maps = []
    for n, (before, after) in zip(shape, widths):
        pos = np.arange(-before, n + after)
        maps.append(reflect_map(pos, n) if mode == "reflect" else np.clip(pos, 0, n - 1))
    return maps


def pad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, pad_width,
                 mode="constant", constant_value=0):
    """constant: dx = dy with the borders cut off; reflect/repeat: every copy adds back."""
    shape = tuple(input_shapes[0])
    dy = grad_outputs[0]
    if mode == "constant":
        lead = len(shape) - len(pad_width) // 2
        start = [0] * lead + list(pad_width[::2])
        stop = [b + n for b, n in zip(start, shape)]
        return [F().slice(dy, start, stop, [1] * len(shape))]
    return [scatter_back(dy, pad_maps(shape, pad_width, mode), shape)]


def transpose_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes):
    """dx = dy transposed back."""
    ndim = len(input_shapes[0])
    return [F().transpose(grad_outputs[0], inverse_permutation([a % ndim for a in axes]))]


def reshape_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, shape,
                     inplace=True):
    """dx = dy in x's shape."""
    return [F().reshape(grad_outputs[0], tuple(input_shapes[0]), inplace=False)]


def broadcast_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, shape):
    """dx = dy summed over the broadcast axes."""
    return [sum_to(grad_outputs[0], input_shapes[0])]


def tile_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, reps):
    """dx = the sum of dy's tiles: dy viewed as (r0, n0, r1, n1, ...) summed over the r's."""
    shape = tuple(input_shapes[0])
    ndim = max(len(shape), len(reps))
    sizes = (1,) * (ndim - len(shape)) + shape
    reps = (1,) * (ndim - len(reps)) + tuple(reps)
    split = [v for r, n in zip(reps, sizes) for v in (r, n)]
    g = F().reshape(grad_outputs[0], split, inplace=False)
    g = F().sum(g, axis=list(range(0, 2 * ndim, 2)))
    return [F().reshape(g, shape, inplace=False)]


def flip_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axes=None):
    """dx = dy flipped back."""
    return [F().flip(grad_outputs[0], axes)]


def shift_maps(shape, shifts, border_mode):
    """Per axis, the source position of each output of a shift."""
    maps = []
    for n, s in zip(shape, shifts):
        pos = np.arange(n) - s
        maps.append(symmetric_map(pos, n) if border_mode == "reflect"
                    else np.clip(pos, 0, n - 1))
    return maps


def shift_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, shifts=None,
                   border_mode="nearest"):
    """dx = dy moved back; border positions that were read repeatedly add up."""
    shape = tuple(input_shapes[0])
    shifts = list(shifts or [])
    shifts = [0] * (len(shape) - len(shifts)) + shifts
    if not any(shifts):
        return [grad_outputs[0] * 1.0]
    return [scatter_back(grad_outputs[0], shift_maps(shape, shifts, border_mode), shape)]


BACKWARDS = {
    "Concatenate": concatenate_backward, "Split": split_backward, "Stack": stack_backward,
    "Slice": slice_backward, "Pad": pad_backward, "Transpose": transpose_backward,
    "Reshape": reshape_backward, "Broadcast": broadcast_backward, "Tile": tile_backward,
    "Flip": flip_backward, "Shift": shift_backward,
}
