"""``F.global_average_pooling``'s backward function and nnabla's
``GlobalAveragePoolingDataGrad`` (see
:mod:`._grad_function`); the map is linear, so the data gradient's own gradient is
``F.global_average_pooling`` again."""
from __future__ import annotations

from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._util import F


class GlobalAveragePoolingDataGrad(DataGrad):
    """dx of ``F.global_average_pooling`` from ``dy``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        (no other arguments)
    """

    type_name = "GlobalAveragePooling"


def _forward(x, **args):
    return F().global_average_pooling(x, **args)


BACKWARDS = unary_backwards("GlobalAveragePooling", _forward, GlobalAveragePoolingDataGrad)
