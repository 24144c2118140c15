"""Copying a graph, optionally on other inputs."""
from __future__ import annotations

from .graph_converter import FunctionModifier

__all__ = ["IdentityModifier"]


class IdentityModifier(FunctionModifier):
    """Rebuild every function as it is; the inputs found in ``inputs`` are replaced by
    their values there.

    Args:
        inputs (dict): original input variable -> the variable to use instead.
        copy_value (bool): copy the original input's data and grad into the replacement
            (the shapes must be equal).

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> import nnabla.experimental.graph_converters as GC
        >>> x0, x1 = nn.Variable((2, 3)), nn.Variable((2, 3))
        >>> yy = GC.GraphConverter([GC.IdentityModifier({x0: x1})]).convert(F.relu(x0))
        >>> yy.parent.inputs[0] == x1
        True
    """

    def __init__(self, inputs={}, copy_value=False):
        super().__init__()
        self._input_dict = inputs
        self._copy_value = copy_value

    def _replacement(self, v):
        for original, replacement in (self._input_dict or {}).items():
            if original == v:
                return replacement
        return None

    def modify(self, f, inputs):
        if not self._input_dict:
            return None
        new_inputs, replaced = list(inputs), False
        for i, v in enumerate(f.inputs):
            if v.parent is not None:
                continue
            repl = self._replacement(v)
            if repl is None:
                continue
            if self._copy_value:
                if tuple(repl.shape) != tuple(v.shape):
                    raise ValueError(
                        f"IdentityModifier: replacement of shape {repl.shape} for an input of "
                        f"shape {v.shape}; copy_value=True needs equal shapes")
                repl.d = v.d.copy()
                repl.g = v.g.copy()
            new_inputs[i], replaced = repl, True
        if not replaced:
            return None
        self.init_map_func_inputs(f, new_inputs)
        return self._call_function(f.info.type_name, new_inputs, f.info.args)

    def __finish__(self):
        pass
