"""``F.unpooling``'s backward function and nnabla's ``UnpoolingDataGrad`` (see
:mod:`._grad_function`); the map is linear, so the data gradient's own gradient is
``F.unpooling`` again."""
from __future__ import annotations

from ._grad_function import DataGrad
from ._layers import unary_backwards
from ._util import F


class UnpoolingDataGrad(DataGrad):
    """dx of ``F.unpooling`` from ``dy``; set ``xshape``, then call it.

    Args:
        ctx (Context): the context.
        kernel, channel_last: as ``F.unpooling``'s.
    """

    type_name = "Unpooling"


def _forward(x, **args):
    return F().unpooling(x, **args)


BACKWARDS = unary_backwards("Unpooling", _forward, UnpoolingDataGrad)
