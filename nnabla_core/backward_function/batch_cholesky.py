"""``F.batch_cholesky``'s backward function, the symmetric gradient the kernel gives.

With ``L`` the lower factor (the output, transposed when ``upper``) and ``dL`` its
gradient (likewise), Murray (2016):

    dA = sym(L^-T Phi(L^T dL) L^-1),   sym(S) = (S + S^T) / 2,

where ``Phi`` keeps the lower triangle and halves the diagonal (a constant mask).
It is built from ``F.batch_matmul`` and ``F.batch_inv`` on the output variable, so
differentiating it again goes back through the output to the input.
"""
from __future__ import annotations

import numpy as np

from ._shaping import constant
from ._util import F


def phi_mask(n):
    """The ``(1, n, n)`` mask of ``Phi``: ones below the diagonal, 0.5 on it."""
    return np.tril(np.ones((n, n), np.float32) - 0.5 * np.eye(n, dtype=np.float32))[None]


def _swap_last(x):
    return F().transpose(x, (0, 2, 1))


def _batch_cholesky_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                             upper=False):
    y, dy = outputs[0], grad_outputs[0]
    low, dlow = (_swap_last(y), _swap_last(dy)) if upper else (y, dy)
    phi = F().batch_matmul(low, dlow, transpose_a=True) * constant(phi_mask(y.shape[-1]))
    inv = F().batch_inv(low)
    s = F().batch_matmul(inv, F().batch_matmul(phi, inv), transpose_a=True)
    return [(s + _swap_last(s)) * 0.5]


BACKWARDS = {"BatchCholesky": _batch_cholesky_backward}
