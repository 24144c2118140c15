"""``F.spectral_norm``'s backward function.

``w_sn = W / sigma`` with ``W`` the weight as a ``(d0, d1)`` matrix (axis ``dim``
first), ``sigma = u^T W v`` and ``u``, ``v`` from ``itr`` power iterations started
at the given ``u``. Like the kernel, the gradient holds ``u`` and ``v`` constant:
they are computed here from the values of ``W`` cut from the graph (``F.unlink``),
so only the explicit ``W`` in ``W / (u^T W v)`` is differentiated, to any order.

The iterations must start from the ``u`` the forward pass started from: the
``u`` output when ``output_u=True`` (the forward returns its input value), or the
``u`` input when ``test=True`` (not updated). Otherwise the forward pass has
overwritten ``u`` with its last iterate and the starting point is gone; then the
gradient is the kernel's (first order only), which kept its ``u`` and ``v``.
"""
from __future__ import annotations

from ._shaping import detached
from ._util import F


def as_matrix(w, dim):
    """``w`` with axis ``dim`` moved first, as a ``(w.shape[dim], -1)`` matrix."""
    dim %= w.ndim
    if dim != 0:
        w = F().transpose(w, [dim] + [a for a in range(w.ndim) if a != dim])
    return F().reshape(w, (w.shape[0], -1))


def power_iteration(w_matrix, u, itr, eps):
    """``(u, v)`` after ``itr`` power iterations on ``w_matrix`` from ``u``, as a
    ``(1, d0)`` row and a ``(d1, 1)`` column."""
    def unit(a):
        return a * (F().sum(a * a, keepdims=True) + eps) ** -0.5

    d0, d1 = w_matrix.shape
    u = F().reshape(u, (1, d0))
    v = None
    for _ in range(itr):
        v = F().reshape(unit(F().affine(u, w_matrix)), (d1, 1))
        u = F().reshape(unit(F().affine(w_matrix, v)), (1, d0))
    return u, v


def spectral_norm_matrix(w, u0, dim, itr, eps):
    """``W / (u^T W v)`` as a matrix, ``u`` and ``v`` constants computed from ``u0``."""
    w_matrix = as_matrix(w, dim)
    u, v = power_iteration(detached(w_matrix), detached(u0), itr, eps)
    sigma = F().affine(u, F().affine(w_matrix, v))
    return w_matrix / sigma


def _spectral_norm_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                            dim=0, itr=1, eps=1e-12, test=False, output_u=False):
    import nnabla as nn
    w, u = inputs[0], inputs[1]
    if output_u:
        u0 = outputs[1]
    elif test:
        u0 = u
    else:
        from .._kernel_grad import kernel_grads
        return kernel_grads(outputs[0].parent, [0], grad_outputs, inputs, outputs)
    w_sn = spectral_norm_matrix(w, u0, dim, itr, eps)
    dy = as_matrix(grad_outputs[0], dim)
    return [nn.grad([w_sn], [w], grad_outputs=[dy])[0], None]


BACKWARDS = {"SpectralNorm": _spectral_norm_backward}
