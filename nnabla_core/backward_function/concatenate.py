"""``ConcatenateDataGrad``: the data gradients of ``F.concatenate`` as a function of ``dy``
(see :mod:`._data_grad`); its own backward function concatenates again.
"""
from __future__ import annotations

import numpy as np

from ._data_grad import LinearMapDataGrad
from ._util import F


class ConcatenateDataGrad(LinearMapDataGrad):
    """dx_1, ..., dx_n = dy split along ``axis`` into pieces of ``xshapes``.

    Args:
        ctx (Context): the context.
        axis (int): the concatenation axis (None: the last).
    """

    def __init__(self, ctx, axis=None):
        super().__init__(ctx, axis=axis)
        self._xshapes = None

    @property
    def xshapes(self):
        """The shapes of the forward function's inputs (the shapes of the dx)."""
        return self._xshapes

    @xshapes.setter
    def xshapes(self, shapes):
        self._xshapes = [tuple(s) for s in shapes]
        self._xshape = self._xshapes[0]

    def min_outputs(self):
        return len(self._xshapes or [()])

    def out_shapes(self):
        return self._xshapes

    def _axis(self):
        axis = self._args["axis"]
        ndim = len(self._xshapes[0])
        return ndim - 1 if axis is None else axis % ndim

    def apply(self, xs):
        return np.concatenate(xs if isinstance(xs, list) else [xs], axis=self._axis())

    def transpose(self, dy):
        cuts = np.cumsum([s[self._axis()] for s in self._xshapes])[:-1]
        return [np.ascontiguousarray(p) for p in np.split(dy, cuts, axis=self._axis())]


def concatenate_data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                   axis=None):
    """The gradient of ``dy`` is the gradients of the dx concatenated."""
    return [F().concatenate(*grad_outputs, axis=axis)]


BACKWARDS = {"ConcatenateDataGrad": concatenate_data_grad_backward}
