"""``F.average_pooling``'s backward function and nnabla's ``AveragePoolingDataGrad`` (see
:mod:`._grad_function`); the map is linear, so the data gradient's own gradient is
``F.average_pooling`` again."""
from __future__ import annotations

from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._util import F


class AveragePoolingDataGrad(DataGrad):
    """dx of ``F.average_pooling`` from ``dy``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        kernel, stride, ignore_border, pad, channel_last, including_pad: as ``F.average_pooling``'s.
    """

    type_name = "AveragePooling"


def _forward(x, **args):
    return F().average_pooling(x, **args)


BACKWARDS = unary_backwards("AveragePooling", _forward, AveragePoolingDataGrad)
