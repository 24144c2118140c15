"""Backward functions of the cumulative scans CumSum and CumProd.

The adjoint of a scan is the scan in the other direction: an inclusive forward sum
``y_j = sum_{i<=j} x_i`` gives ``dx_i = sum_{j>=i} dy_j``, an exclusive one the same
with ``j > i``. CumProd is reduced to an inclusive forward scan of a *prepared*
sequence (flipped when ``reverse``, shifted by one with a leading 1 when
``exclusive``), whose gradient handles zeros in ``x`` without dividing by them.
"""
from __future__ import annotations

from ._util import F
from .math import no_grad


def cumsum_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=None,
                    exclusive=False, reverse=False):
    """dx = cumsum(dy) in the opposite direction, with the same ``exclusive``."""
    axis = 0 if axis is None else axis
    return [F().cumsum(grad_outputs[0], axis=axis, exclusive=exclusive, reverse=not reverse)]


def _slice_axis(x, axis, start, stop):
    shape = list(x.shape)
    begin = [0] * len(shape)
    end = list(shape)
    begin[axis], end[axis] = start, stop
    return F().slice(x, begin, end, [1] * len(shape))


def _shift(x, axis, fill):
    """out[0] = fill, out[i] = x[i - 1] along ``axis`` (what an exclusive scan reads)."""
    head_shape = list(x.shape)
    head_shape[axis] = 1
    head = F().constant(fill, head_shape)
    return F().concatenate(head, _slice_axis(x, axis, 0, x.shape[axis] - 1), axis=axis)


def _unshift(g, axis):
    """Adjoint of :func:`_shift`: out[i] = g[i + 1], and 0 for the last element."""
    tail_shape = list(g.shape)
    tail_shape[axis] = 1
    tail = F().constant(0, tail_shape)
    return F().concatenate(_slice_axis(g, axis, 1, g.shape[axis]), tail, axis=axis)


def _inclusive_cumprod_grad(x, dy, axis):
    """Gradient of ``y = cumprod(x)`` (inclusive, forward), exact to second order with zeros.

    dx_i = sum_{j>=i} dy_j A_ij with A_ij = prod_{k<=j, k!=i} x_k. With Z the zero mask,
    x' = x + Z (zeros read as 1), P = cumprod(x') and C = cumsum(Z), the zeros in A
    other than x_i number C_j - Z_i. A vanishes (with its first derivatives) when they
    are two or more; with one, A is P_j / x'_i times that zero, which is recovered as
    X_j - Z_i x_i with X = cumsum(Z x) (value 0, derivative 1). Grouping the j-sums by
    C_j turns every term into a reverse cumsum, so the cost stays linear.
    """
    fn = F()
    zero = no_grad(fn.equal_scalar(x, 0))
    count = no_grad(fn.cumsum(zero, axis=axis))
    zeros_so_far = fn.cumsum(zero * x, axis=axis)
    t = dy * fn.cumprod(x + zero, axis=axis)

    def suffix_sum(v, count_value):
        at = no_grad(fn.equal_scalar(count, count_value))
        return fn.cumsum(v * at, axis=axis, reverse=True)

    nonzero_part = suffix_sum(t, 0) + suffix_sum(t * zeros_so_far, 1)
    zero_part = (suffix_sum(t, 1) + suffix_sum(t * zeros_so_far, 2)
                 - x * suffix_sum(t, 2))
    return ((1 - zero) * nonzero_part + zero * zero_part) / (x + zero)


def cumprod_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, axis=None,
                     exclusive=False, reverse=False):
    """dx of ``y = cumprod(x, axis, exclusive, reverse)``, through an inclusive forward scan."""
    fn = F()
    axis = 0 if axis is None else axis
    dy, x = grad_outputs[0], inputs[0]
    if x.shape[axis] == 0:
        return [dy * 0]

    def orient(v):
        return fn.flip(v, axes=[axis]) if reverse else v

    prepared = orient(x)
    if exclusive:
        prepared = _shift(prepared, axis, 1)
    g = _inclusive_cumprod_grad(prepared, orient(dy), axis)
    if exclusive:
        g = _unshift(g, axis)
    return [orient(g)]


BACKWARDS = {"CumSum": cumsum_backward, "CumProd": cumprod_backward}
