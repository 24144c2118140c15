"""The graph converter (``nnabla.experimental.graph_converters.GraphConverter``) and the base
class of its modifiers (:class:`FunctionModifier`).

A converter walks a graph from its inputs to its outputs (a topological order of the
functions, as ``Variable.visit`` gives it) and asks each modifier, for every function, what
the new graph computes in its place: the same function on the new inputs (the default),
another function, or a variable that short-cuts it. The original graph is left untouched;
leaves (inputs, parameters) are shared with the new graph (unlinked copies sharing data).
"""
from __future__ import annotations

from collections import defaultdict

from ... import parameter as _parameter
from ..._dispatch import call_function
from ..._variable import Variable
from ...utils._nnp_functions import place_inputs, spec_of

__all__ = ["FunctionModifier", "GraphConverter"]


class FunctionModifier:
    """Base class of modifiers.

    :meth:`modify` is called for each function of the graph, in topological order, when
    ``GraphConverter(modifiers).convert(outputs)`` runs. It receives the original function
    ``f`` (read its type with ``f.info.type_name`` and arguments with ``f.info.args``) and the
    new graph's ``inputs`` for it, and returns ``None`` (call the same function on
    ``inputs``) or the variable that replaces ``f``'s output in the new graph.

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> import nnabla.experimental.graph_converters as GC
        >>> class ReLUToLeakyReLU(GC.FunctionModifier):
        ...     def modify(self, f, inputs):
        ...         if f.info.type_name == 'ReLU':
        ...             return F.leaky_relu(inputs[0])
        >>> x = nn.Variable((2, 3))
        >>> y = GC.GraphConverter([ReLUToLeakyReLU()]).convert(F.relu(x) * 2)
        >>> y.parent.inputs[0].parent.info.type_name
        'LeakyReLU'
    """

    def __init__(self):
        super().__init__()
        self._map_func_inputs = defaultdict(list)

    def init_map_func_inputs(self, f, inputs):
        """Use ``inputs`` as the new inputs of function ``f`` (set before conversion)."""
        self._map_func_inputs[f] = list(inputs)

    def get_parameter_scope(self, v):
        """The scope of the registered parameter ``v`` (``'conv1/conv'`` for
        ``'conv1/conv/W'``), or ``''`` when ``v`` is not a registered parameter."""
        for name, param in _parameter.get_parameters(grad_only=False).items():
            if param == v:
                return "/".join(name.split("/")[:-1])
        return ""

    def _force_list(self, o):
        if isinstance(o, tuple):
            return list(o)
        if not isinstance(o, list):
            return [o]
        return o

    def _copy_inputs(self, inputs):
        """Unlinked copies of ``inputs`` (new graph nodes sharing data and grad)."""
        return [i.get_unlinked_variable(need_grad=i.need_grad) for i in inputs]

    def _new_inputs(self, f):
        mapped = self._map_func_inputs.get(f)
        originals = list(f.inputs)
        if not mapped and originals and originals[0].parent is None:
            mapped = self._copy_inputs(originals)
            self._map_func_inputs[f] = mapped
        mapped = list(mapped or [])
        mapped += [None] * (len(originals) - len(mapped))
        return [m if m is not None else o for m, o in zip(mapped, originals)]

    def __call__(self, f):
        inputs = self._new_inputs(f)
        o = self.modify(f, inputs)
        if o is None:
            o = self._modify_as_same(f, inputs)
        elif not isinstance(o, (Variable, list, tuple)):
            raise ValueError(f"{type(self).__name__}.modify: returned {type(o).__name__} for "
                             f"function {f.info.type_name}; expected None or nn.Variable")
        outputs = self._force_list(o)
        self.outputs = outputs
        for old, new in zip(f.outputs, outputs):
            for func in old.function_references:
                slots = self._map_func_inputs[func]
                if len(slots) < len(func.inputs):
                    slots += [None] * (len(func.inputs) - len(slots))
                for i, inp in enumerate(func.inputs):
                    if inp == old:
                        slots[i] = new

    def modify(self, f, inputs):
        """Return what replaces ``f`` in the new graph (override in a subclass).

        Args:
            f (nnabla.function.Function): the original function.
            inputs (list of nnabla.Variable): its inputs in the new graph.

        Returns:
            None (the same function on ``inputs``), or nnabla.Variable / list of them.
        """
        return None

    def _modify_as_same(self, f, inputs):
        return self._call_function(f.info.type_name, inputs, f.info.args)

    def _call_function(self, type_name, inputs, args):
        """Create function ``type_name`` with ``args`` on ``inputs`` (graph mode)."""
        spec = spec_of(type_name, f"{type(self).__name__}: ")
        known = {a.name for a in spec.args}
        args = {k: v for k, v in dict(args).items() if k in known}
        placed = place_inputs(spec, args, list(inputs))
        return call_function(type_name, *placed, **args)

    def __finish__(self):
        """Reset the subclass's own state after one conversion (override if needed)."""

    def finish_up(self):
        """Reset the modifier after one conversion (called by :class:`GraphConverter`)."""
        self._map_func_inputs = defaultdict(list)
        self.__finish__()


class GraphConverter:
    """Convert a graph with a list of modifiers, applied one after the other.

    Args:
        modifiers (list of FunctionModifier): nested lists are flattened (the folding
            modifiers are lists of two).

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> import nnabla.experimental.graph_converters as GC
        >>> x = nn.Variable((2, 3))
        >>> y = F.relu(F.mul_scalar(x, 2.0))
        >>> yy = GC.GraphConverter([GC.RemoveFunctionModifier(['MulScalar'])]).convert(y)
        >>> yy.parent.inputs[0].parent is None
        True
    """

    def __init__(self, modifiers=[]):
        self._modifiers = self._prepare_modifiers(modifiers)

    def _prepare_modifiers(self, modifiers=[]):
        flat = []
        for modifier in modifiers:
            if isinstance(modifier, (list, tuple)):
                flat += self._prepare_modifiers(modifier)
            elif not callable(getattr(modifier, "modify", None)):
                raise TypeError(f"GraphConverter: argument 'modifiers' holds "
                                f"{type(modifier).__name__}; expected FunctionModifier objects")
            else:
                flat.append(modifier)
        return flat

    def _force_list(self, o):
        if isinstance(o, tuple):
            return list(o)
        if not isinstance(o, list):
            return [o]
        return o

    def convert(self, o):
        """Convert the graph ending at ``o``.

        Args:
            o (nnabla.Variable or list of them): the outputs of the graph.

        Returns:
            nnabla.Variable, or a list when ``o`` is a list: the new graph's outputs.
        """
        from ... import functions as F

        outputs = self._force_list(o)
        for v in outputs:
            if not isinstance(v, Variable):
                raise TypeError(f"GraphConverter.convert: argument 'o' holds "
                                f"{type(v).__name__}; expected nn.Variable")
        for modifier in self._modifiers:
            sink = F.sink(*outputs)
            sink.visit(modifier)
            outputs = list(modifier.outputs[0].parent.inputs)
            modifier.finish_up()
        return outputs if isinstance(o, list) else outputs[0]
