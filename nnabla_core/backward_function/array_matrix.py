"""Backward functions of the matrix-shaped array functions: triangles, diagonals, grids and
batched determinants and inverses.
"""
from __future__ import annotations

from ._shaping import zeros
from ._util import F


def trilu_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, k=0,
                   upper=True):
    """dx = dy with the same triangle kept."""
    return [F().trilu(grad_outputs[0], k=k, upper=upper)]


def matrix_diag_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = the diagonals of dy."""
    return [F().matrix_diag_part(grad_outputs[0])]


def matrix_diag_part_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = diagonal matrices made from dy."""
    return [F().matrix_diag(grad_outputs[0])]


def meshgrid_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                      ij_indexing=False):
    """dx_i = dy_i summed over every axis but the one x_i runs along ('xy' swaps 0 and 1)."""
    n = len(input_shapes)
    axis_of = list(range(n))
    if not ij_indexing and n > 1:
        axis_of[0], axis_of[1] = 1, 0
    grads = []
    for i, (g, shape) in enumerate(zip(grad_outputs, input_shapes)):
        if g is None:
            grads.append(zeros(shape))
            continue
        others = [a for a in range(g.ndim) if a != axis_of[i]]
        grads.append(F().sum(g, axis=others) if others else g * 1.0)
    return grads


def _transposed(m):
    return F().transpose(m, [0, 2, 1])


def batch_det_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy det(x) inv(x)^T, per matrix."""
    batch = input_shapes[0][0]
    scale = F().reshape(grad_outputs[0] * outputs[0], (batch, 1, 1), inplace=False)
    return [scale * _transposed(F().batch_inv(inputs[0]))]


def batch_inv_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = -y^T dy y^T with y = inv(x)."""
    y = outputs[0]
    left = F().batch_matmul(y, grad_outputs[0], transpose_a=True)
    return [-F().batch_matmul(left, y, transpose_b=True)]


def batch_logdet_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """dx = dy inv(x)^T, per matrix."""
    batch = input_shapes[0][0]
    scale = F().reshape(grad_outputs[0], (batch, 1, 1), inplace=False)
    return [scale * _transposed(F().batch_inv(inputs[0]))]


BACKWARDS = {
    "Trilu": trilu_backward, "MatrixDiag": matrix_diag_backward,
    "MatrixDiagPart": matrix_diag_part_backward, "Meshgrid": meshgrid_backward,
    "BatchDet": batch_det_backward, "BatchInv": batch_inv_backward,
    "BatchLogdet": batch_logdet_backward,
}
