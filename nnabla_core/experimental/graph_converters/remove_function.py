"""Removing functions of given types from a graph."""
from __future__ import annotations

import difflib

from .graph_converter import FunctionModifier

__all__ = ["RemoveFunctionModifier"]


class RemoveFunctionModifier(FunctionModifier):
    """Remove every function whose type is in ``rm_funcs``: its first input takes the
    place of its output.

    Args:
        rm_funcs (list of str): function types (``'BatchNormalization'``,
            ``'MulScalar'``, ...). A type absent from the graph is left alone, as in nnabla;
            a name that is no nnabla function type and matches no function of the graph
            (a misspelling such as ``'Dropuot'``) raises ValueError after the conversion.

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
        self._seen = set()

    def modify(self, f, inputs):
        self._seen.add(f.info.type_name)
        if f.info.type_name in self._rm_funcs and f.info.type_name != "Sink":
            return inputs[0]
        return None

    def __finish__(self):
        from ...function_spec import SPECS

        seen, self._seen = self._seen, set()
        unknown = [n for n in self._rm_funcs if n not in SPECS and n not in seen]
        if unknown:
            hints = {n: difflib.get_close_matches(n, list(SPECS), n=1) for n in unknown}
            said = ", ".join(repr(n) + (f" (did you mean {h[0]!r}?)" if h else "")
                             for n, h in hints.items())
            raise ValueError(f"{type(self).__name__}: argument 'rm_funcs' names {said}, "
                             f"which is no nnabla function type and no function of the "
                             f"converted graph; expected function type names such as "
                             f"'Dropout' or 'BatchNormalization'")
