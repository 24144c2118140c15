"""``SliceDataGrad``: the data gradient of ``F.slice`` as a function of ``dy`` (see
:mod:`._data_grad`); its own backward function slices again.
"""
from __future__ import annotations

import numpy as np

from ._data_grad import LinearMapDataGrad
from ._util import F
from .array import _resolved_slice


class SliceDataGrad(LinearMapDataGrad):
    """dx = dy placed at ``x[start:stop:step]`` in zeros of ``xshape``.

    Args:
        ctx (Context): the context.
        start, stop, step (list of int): the slice (as ``F.slice``).
    """

    def __init__(self, ctx, start=None, stop=None, step=None):
        super().__init__(ctx, start=start, stop=stop, step=step)

    def _index(self):
        bounds = _resolved_slice(self.xshape, self._args["start"], self._args["stop"],
                                 self._args["step"])
        return tuple(slice(a, b, c) for a, b, c in zip(*bounds))

    def apply(self, x):
        return x[self._index()].copy()

    def transpose(self, dy):
        dx = np.zeros(self.xshape, dtype=np.float32)
        dx[self._index()] = dy.reshape(dx[self._index()].shape)
        return dx


def slice_data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                             start=None, stop=None, step=None):
    """The gradient of ``dy`` is the slice of the gradient of ``dx``."""
    return [F().slice(grad_outputs[0], start, stop, step)]


BACKWARDS = {"SliceDataGrad": slice_data_grad_backward}
