"""``TransposeDataGrad``: the data gradient of ``F.transpose`` as a function of ``dy`` (see
:mod:`._data_grad`); its own backward function transposes again.
"""
from __future__ import annotations

import numpy as np

from ._data_grad import LinearMapDataGrad
from ._shaping import inverse_permutation
from ._util import F


class TransposeDataGrad(LinearMapDataGrad):
    """dx = dy transposed back to ``xshape``.

    Args:
        ctx (Context): the context.
        axes (list of int): the permutation of the forward transpose.
    """

    def __init__(self, ctx, axes):
        super().__init__(ctx, axes=list(axes))

    def _perm(self):
        return [a % len(self.xshape) for a in self._args["axes"]]

    def apply(self, x):
        return np.ascontiguousarray(np.transpose(x, self._perm()))

    def transpose(self, dy):
        return np.ascontiguousarray(np.transpose(dy, inverse_permutation(self._perm())))


def transpose_data_grad_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                 axes):
    """The gradient of ``dy`` is the gradient of ``dx`` transposed forward."""
    return [F().transpose(grad_outputs[0], axes)]


BACKWARDS = {"TransposeDataGrad": transpose_data_grad_backward}
