"""``F.sum_pooling``'s backward function and nnabla's ``SumPoolingDataGrad`` (see
:mod:`._grad_function`); the map is linear, so the data gradient's own gradient is
``F.sum_pooling`` again."""
from __future__ import annotations

from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._util import F


class SumPoolingDataGrad(DataGrad):
    """dx of ``F.sum_pooling`` from ``dy``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        kernel, stride, ignore_border, pad, channel_last: as ``F.sum_pooling``'s.
    """

    type_name = "SumPooling"


def _forward(x, **args):
    return F().sum_pooling(x, **args)


BACKWARDS = unary_backwards("SumPooling", _forward, SumPoolingDataGrad)
