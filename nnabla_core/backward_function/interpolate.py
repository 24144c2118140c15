"""``F.interpolate``'s backward function and nnabla's ``InterpolateDataGrad``.

Interpolation (linear or nearest, any corner convention) is a linear map of ``x``, so
``dx = InterpolateDataGrad(dy)`` (the kernel's own transpose, see :mod:`._grad_function`)
and the data gradient's own gradient is ``F.interpolate`` again, to any order.
"""
from __future__ import annotations

from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._util import F


class InterpolateDataGrad(DataGrad):
    """dx of ``F.interpolate`` from ``dy``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        output_size (list of int): the spatial sizes of ``y`` (nnabla's class takes no
            ``scale``).
        mode, align_corners, half_pixel, half_pixel_for_nn, channel_last: as
            ``F.interpolate``'s.
    """

    type_name = "Interpolate"


def _interpolate(x, **args):
    return F().interpolate(x, None, **args)


BACKWARDS = unary_backwards("Interpolate", _interpolate, InterpolateDataGrad)
