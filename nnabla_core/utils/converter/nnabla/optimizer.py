"""``nnabla_cli optimize``: matrix products written as Reshape/BatchMatmul/Add2 (as ONNX
and TensorFlow converters produce them) become one Affine.

:func:`optimize_nnp` walks the default network of a proto graph in forward order. Six
consecutive functions ``Reshape, Reshape, Reshape, BatchMatmul, Reshape, Add2`` where the
reshapes feed the product's ``x`` and ``w`` and the addition's bias become
``Affine(reshaped x, w, bias)`` writing the addition's output (the ``x`` and bias reshapes
are kept); everything else is copied. This is the rewrite nnabla 1.39's optimizer makes.
"""
from __future__ import annotations

from collections import OrderedDict

_AFFINE_PATTERN = ("Reshape", "Reshape", "Reshape", "BatchMatmul", "Reshape", "Add2")


class _Builder:
    def __init__(self, network):
        from ....core.graph_def import ProtoNetwork

        self.old = network
        self.new = ProtoNetwork(network.owner(), network.name, network.batch_size)
        self.names = {}

    def unique(self, name):
        from ...._naming import unique_name
        return unique_name(self.names, name)

    def variable(self, name):
        self.unique(name)
        for table, new_table in ((self.old.variables, self.new.variables),
                                 (self.old.parameters, self.new.parameters)):
            if name in table:
                new_table[name] = table[name].clone()

    def function(self, f):
        for name in list(f.inputs) + list(f.outputs):
            self.variable(name)
        self.unique(f.name)
        self.new.functions[f.name] = f.clone(self.new)

    def affine(self, window):
        from ....core.graph_def import ProtoFunction

        reshapes = window[:3]
        matmul, add = window[3], window[5]
        by_output = {r.outputs[0]: r for r in reshapes + [window[4]]}
        x = by_output.get(matmul.inputs[0])
        w = by_output.get(matmul.inputs[1])
        bias = next((by_output.get(i) for i in add.inputs
                     if by_output.get(i) in reshapes and by_output.get(i) not in (x, w)), None)
        if x is None or w is None or bias is None:
            return False
        self.function(x)
        self.variable(w.inputs[0])
        self.function(bias)
        name = self.unique("MatmulAddToAffine")
        affine = ProtoFunction(None, "Affine", {"base_axis": 1}, name, self.new)
        affine.inputs = [x.outputs[0], w.inputs[0], bias.inputs[0]]
        affine.outputs = list(add.outputs)
        for out in affine.outputs:
            self.variable(out)
        self.new.functions[name] = affine
        return True


def optimize_nnp(graph_def):
    """The default network of ``graph_def`` with matmul-add chains as Affine (a new
    ProtoNetwork of the same name; the graph is not changed)."""
    network = graph_def.default_graph()
    functions = list(network.forward_sequence())
    builder = _Builder(network)
    i = 0
    while i < len(functions):
        window = functions[i:i + len(_AFFINE_PATTERN)]
        if tuple(f.type for f in window) == _AFFINE_PATTERN and builder.affine(window):
            i += len(_AFFINE_PATTERN)
            continue
        builder.function(functions[i])
        i += 1
    builder.new.inputs = [k for k in network.inputs if k in builder.new.variables]
    builder.new.outputs = list(network.outputs)
    builder.new.functions = OrderedDict(builder.new.functions)
    return builder.new
