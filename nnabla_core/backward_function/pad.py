"""``PadDataGrad``: the data gradient of ``F.pad`` as a function of ``dy`` (see
:mod:`._data_grad`); its own backward function pads again (with zeros).
"""
from __future__ import annotations

import numpy as np

from ._data_grad import LinearMapDataGrad
from ._shaping import grid_index
from ._util import F
from .array import pad_maps


class PadDataGrad(LinearMapDataGrad):
    """dx = dy cropped to ``xshape`` (constant mode) or folded back (reflect, repeat).

    Args:
        ctx (Context): the context.
        pad_width (list of int): (before, after) pairs of the last axes.
        mode (str): 'constant', 'reflect' or 'repeat'.
        constant_value (float): ignored: the pad constant has no gradient.
    """

    def __init__(self, ctx, pad_width, mode="constant", constant_value=0):
        super().__init__(ctx, pad_width=list(pad_width), mode=mode,
                         constant_value=constant_value)

    def _index(self):
        return tuple(grid_index(pad_maps(self.xshape, self._args["pad_width"],
                                         self._args["mode"])))

    def _crop(self):
        pad_width = self._args["pad_width"]
        lead = len(self.xshape) - len(pad_width) // 2
        starts = [0] * lead + list(pad_width[::2])
        return tuple(slice(b, b + n) for b, n in zip(starts, self.xshape))

    def apply(self, x):
        if self._args["mode"] == "constant":
            pad_width = self._args["pad_width"]
            lead = len(self.xshape) - len(pad_width) // 2
            widths = [(0, 0)] * lead + list(zip(pad_width[::2], pad_width[1::2]))
            return np.pad(x, widths)
        return x[self._index()]

    def transpose(self, dy):
        if self._args["mode"] == "constant":
            return dy[self._crop()].copy()
        dx = np.zeros(self.xshape, dtype=np.float32)
        np.add.at(dx, self._index(), dy)
        return dx


def pad_data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                           pad_width, mode="constant", constant_value=0):
    """The gradient of ``dy`` is the gradient of ``dx`` padded (constant zero)."""
    return [F().pad(grad_outputs[0], pad_width, mode, constant_value=0)]


BACKWARDS = {"PadDataGrad": pad_data_grad_backward}
