"""Removing functions of given types from a graph."""
from __future__ import annotations

from .graph_converter import FunctionModifier

__all__ = ["RemoveFunctionModifier"]


class RemoveFunctionModifier(FunctionModifier):
    """Remove every function whose type is in ``rm_funcs``: its first input takes the
    place of its output.

    Args:
        rm_funcs (list of str): function types (``'BatchNormalization'``,
            ``'MulScalar'``, ...).

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> import nnabla.experimental.graph_converters as GC
        >>> x = nn.Variable((2, 3))
        >>> y = F.relu(F.mul_scalar(x, 2.0))
        >>> yy = GC.GraphConverter([GC.RemoveFunctionModifier(['ReLU'])]).convert(y)
        >>> yy.parent.info.type_name
        'MulScalar'
    """

    def __init__(self, rm_funcs=[]):
        super().__init__()
        if isinstance(rm_funcs, str):
            rm_funcs = [rm_funcs]
        self._rm_funcs = list(rm_funcs)

    def modify(self, f, inputs):
        if f.info.type_name in self._rm_funcs and f.info.type_name != "Sink":
            return inputs[0]
        return None
