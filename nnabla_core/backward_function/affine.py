"""``F.affine``'s backward function and nnabla's ``AffineDataGrad`` / ``AffineFilterGrad``
(see :mod:`._grad_function` and :mod:`._layers`)."""
from __future__ import annotations

from ._grad_function import DataGrad, FilterGrad
from ._layers import bilinear_backwards
from ._util import F


class AffineDataGrad(DataGrad):
    """dx of ``F.affine`` from ``(dy, weight)``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis (int): as ``F.affine``'s.
    """

    type_name, n_inputs, others = "Affine", 3, (1,)


class AffineFilterGrad(FilterGrad):
    """dw of ``F.affine`` from ``(dy, x)``; set ``wshape``, then call it.

    Args:
        ctx (Context): the context.
        base_axis (int): as ``F.affine``'s.
    """

    type_name, n_inputs = "Affine", 3


def _affine(x, w, base_axis=1):
    return F().affine(x, w, None, base_axis)


def _bias_axes(ndim, base_axis=1):
    return list(range(base_axis % ndim))


BACKWARDS = bilinear_backwards("Affine", _affine, AffineDataGrad, AffineFilterGrad, _bias_axes)
