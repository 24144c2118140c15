"""Unfusing ``FusedBatchNormalization`` into ``BatchNormalization -> Add2 -> ReLU``."""
from __future__ import annotations

from ... import functions as F
from ... import parametric_functions as PF
from .graph_converter import FunctionModifier

__all__ = ["UnfusedBatchNormalizationModifier"]


class UnfusedBatchNormalizationModifier(FunctionModifier):
    """Replace each ``FusedBatchNormalization`` by ``PF.batch_normalization``, the optional
    addition of its second input, and the nonlinearity (``relu``). As in nnabla, the
    batch normalization takes its parameters from the current parameter scope.

    Example:
        >>> import nnabla.experimental.graph_converters as GC
        >>> converter = GC.GraphConverter([GC.UnfusedBatchNormalizationModifier()])
    """

    def __init__(self):
        super().__init__()
        self._fct_set = {"relu": F.relu}

    def modify(self, f, inputs):
        if f.info.type_name != "FusedBatchNormalization":
            return None
        args = dict(f.info.args)
        nonlinearity = args.pop("nonlinearity")
        if nonlinearity not in self._fct_set:
            raise ValueError(f"UnfusedBatchNormalizationModifier: nonlinearity "
                             f"{nonlinearity!r} is not supported; expected one of "
                             f"{sorted(self._fct_set)}")
        args = {k: v for k, v in args.items()
                if k in ("axes", "decay_rate", "eps", "batch_stat")}
        h = PF.batch_normalization(inputs[0], **args)
        if len(inputs) > 5 and inputs[5] is not None:
            h = inputs[5] + h
        return self._fct_set[nonlinearity](h)
