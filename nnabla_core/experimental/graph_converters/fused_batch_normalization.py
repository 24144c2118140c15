"""Fusing ``BatchNormalization -> Add2 -> ReLU`` into one ``FusedBatchNormalization``."""
from __future__ import annotations

from ... import parametric_functions as PF
from .graph_converter import FunctionModifier

__all__ = ["FusedBatchNormalizationModifier"]


def _only_reader(v):
    refs = v.function_references
    return refs[0] if len(refs) == 1 else None


class FusedBatchNormalizationModifier(FunctionModifier):
    """Replace each block ``BatchNormalization -> Add2 -> ReLU`` by one
    ``PF.fused_batch_normalization(x, z, nonlinearity='relu')`` named
    ``fused<scope>-<n>``; the block's batch normalization parameters are not reused (new
    parameters are created, as in nnabla).

    Example:
        >>> import nnabla.experimental.graph_converters as GC
        >>> converter = GC.GraphConverter([GC.FusedBatchNormalizationModifier()])
    """

    _fct_set = {"ReLU": "relu"}

    def __init__(self):
        super().__init__()
        self.__finish__()

    def modify(self, f, inputs):
        if not f.outputs[0].function_references:
            return None
        name = f.info.type_name
        if not self._block and self._is_fused_bn_block(f):
            self._block = True
        if not self._block:
            return None
        if name == "BatchNormalization":
            self._bn_args = dict(f.info.args)
            self._name = self.get_parameter_scope(inputs[0])
            return inputs[0]
        if name == "Add2":
            self._add2_input1 = inputs[1]
            return inputs[0]
        if name in self._fct_set:
            args = {k: v for k, v in self._bn_args.items() if k not in ("no_scale", "no_bias")}
            h = PF.fused_batch_normalization(
                inputs[0], self._add2_input1, nonlinearity=self._fct_set[name],
                name=f"fused{self._name}-{self._cnt}", **args)
            self._cnt += 1
            self._block = False
            return h
        return None

    def _is_fused_bn_block(self, f):
        if f.info.type_name != "BatchNormalization":
            return False
        add = _only_reader(f.outputs[0])
        if add is None or add.info.type_name != "Add2" or not (add.inputs[0] == f.outputs[0]):
            return False
        act = _only_reader(add.outputs[0])
        return act is not None and act.info.type_name in self._fct_set

    def __finish__(self):
        self._name = ""
        self._block = False
        self._bn_args = None
        self._add2_input1 = None
        self._cnt = 1
