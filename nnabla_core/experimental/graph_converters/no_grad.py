"""Making a graph's parameters constant (``need_grad=False``)."""
from __future__ import annotations

from ... import parameter as _parameter
from .graph_converter import FunctionModifier

__all__ = ["NoGradModifier"]


class NoGradModifier(FunctionModifier):
    """Rebuild every function with its registered parameters replaced by unlinked copies
    with ``need_grad=False`` (the data is shared; no gradient flows into the parameters).

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> y = PF.affine(nn.Variable((2, 3)), 4)
        >>> yy = GC.GraphConverter([GC.NoGradModifier()]).convert(y)
        >>> [v.need_grad for v in yy.parent.inputs[1:]]
        [False, False]
    """

    def modify(self, f, inputs):
        params = list(_parameter.get_parameters(grad_only=False).values())
        new_inputs = []
        for inp in inputs:
            if any(inp == p for p in params):
                inp = inp.get_unlinked_variable(need_grad=False)
            new_inputs.append(inp)
        return self._call_function(f.info.type_name, new_inputs, f.info.args)
