"""Replacing each batch normalization by its test-mode affine map ``c0 * x + c1``."""
from __future__ import annotations

import numpy as np

from ... import parameter as _parameter
from .graph_converter import FunctionModifier

__all__ = ["BatchNormalizationSelfFoldingModifier"]


class BatchNormalizationSelfFoldingModifier(FunctionModifier):
    """Replace every ``BatchNormalization`` by ``c0 * x + c1`` with
    ``c0 = gamma / sqrt(var + eps)`` and ``c1 = beta - c0 * mean``, two parameters named
    ``c0-<name>-<n>`` and ``c1-<name>-<n>`` in scope ``name`` (``n`` counts the batch
    normalizations of one conversion).

    Args:
        name (str): the parameter scope of the new parameters.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.random.rand(2, 3, 4, 4))
        >>> y = PF.batch_normalization(x, batch_stat=False)
        >>> yy = GC.GraphConverter([GC.BatchNormalizationSelfFoldingModifier()]).convert(y)
        >>> y.forward(); yy.forward()
        >>> bool(np.allclose(y.d, yy.d, atol=1e-6)), yy.parent.info.type_name
        (True, 'Add2')
    """

    def __init__(self, name="bn-self-folding"):
        super().__init__()
        self._cnt = 0
        self._name = name

    def modify(self, f, inputs):
        if f.info.type_name != "BatchNormalization":
            return None
        with _parameter.parameter_scope(self._name):
            out = self._compute_self_folded_parameters(f, inputs, self._cnt)
        self._cnt += 1
        return out

    def _compute_self_folded_parameters(self, bn_func, inputs, cnt):
        beta, gamma, mean, var = (v.d.astype(np.float64) for v in bn_func.inputs[1:5])
        c0 = gamma / np.sqrt(var + bn_func.info.args["eps"])
        c1 = beta - c0 * mean
        dtype = bn_func.inputs[1].d.dtype
        shape = bn_func.inputs[1].shape
        c0 = _parameter.get_parameter_or_create(f"c0-{self._name}-{cnt}", shape,
                                                c0.reshape(shape).astype(dtype))
        c1 = _parameter.get_parameter_or_create(f"c1-{self._name}-{cnt}", shape,
                                                c1.reshape(shape).astype(dtype))
        return c0 * inputs[0] + c1

    def __finish__(self):
        self._cnt = 0
