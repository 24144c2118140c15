"""NNP -> ONNX (``nnabla_cli convert x.nnp y.onnx``): the first executor's network.

The executor's data variables are the graph inputs and its output variables the graph
outputs; parameters become initializers; batch dimensions ``-1`` take ``batch_size``.
:data:`~._export_ops.EXPORTERS` lists the function types exported (opset 13 by default).
"""
from __future__ import annotations

import numpy as np

from ._require import require_onnx
from . import _export_layers  # noqa: F401  (registers its exporters)
from ._export_ops import EXPORTERS, Unsupported
from ._graph import OnnxGraph

DEFAULT_OPSET = 13
PRODUCER_NAME = "nnabla"


def supported_functions():
    """The NNP function types the exporter converts."""
    return sorted(EXPORTERS)


class OnnxExporter:
    """Writes an ``nnp`` object (see ``NnpImporter``) as an ONNX model.

    Args:
        nnp: the model.
        batch_size (int): replaces ``-1`` dimensions (negative: the network's batch size).
        ir_version (int): ONNX IR version (not positive: onnx's default for the opset).
        opset (int or str): ONNX opset (13 or later).
    """

    def __init__(self, nnp, batch_size, ir_version=-1, opset=DEFAULT_OPSET):
        self._onnx = require_onnx()
        self._nnp = nnp.protobuf
        self._batch_size = batch_size
        self._ir_version = ir_version
        self._opset = int(opset)
        if self._opset < 13:
            raise ValueError(f"ONNX export: opset {self._opset}; this exporter writes opset "
                             f"13 or later")

    def _network(self):
        executor = self._nnp.executor[0]
        for network in self._nnp.network:
            if network.name == executor.network_name:
                return executor, network
        raise ValueError(f"ONNX export: network {executor.network_name!r} of executor "
                         f"{executor.name!r} is not in the file")

    def export_model_proto(self):
        """The ``onnx.ModelProto``."""
        from ... import _nnp_functions

        onnx = self._onnx
        executor, network = self._network()
        batch = self._batch_size if self._batch_size > 0 else max(network.batch_size, 1)
        g = OnnxGraph(onnx, self._opset)
        types = {}
        for v in network.variable:
            g.reserve(v.name)
            g.shapes[v.name] = tuple(d if d >= 0 else batch for d in v.shape.dim)
            types[v.name] = v.type
        params = {p.variable_name: p for p in self._nnp.parameter}
        used = set()
        for f in network.function:
            exporter = EXPORTERS.get(f.type)
            if exporter is None:
                raise Unsupported(f"ONNX export: function {f.name!r} has type {f.type!r}, "
                                  f"which is not exported; exported types: "
                                  f"{', '.join(supported_functions())}")
            args = _nnp_functions.read_arguments(f, f"function {f.name!r}: ")
            exporter(g, f, args, list(f.input), list(f.output))
            used.update(n for n in f.input if types.get(n) == "Parameter")
        for name in sorted(used, key=list(types).index):
            if name not in params:
                raise ValueError(f"ONNX export: parameter {name!r} has no values in the file")
            data = np.array(params[name].data, dtype=np.float32).reshape(g.shapes[name])
            g.initializers.append(onnx.numpy_helper.from_array(data, name))
        value = onnx.helper.make_tensor_value_info
        inputs = [value(d.variable_name, onnx.TensorProto.FLOAT, g.shapes[d.variable_name])
                  for d in executor.data_variable]
        outputs = [value(o.variable_name, onnx.TensorProto.FLOAT, g.shapes[o.variable_name])
                   for o in executor.output_variable]
        graph = onnx.helper.make_graph(g.nodes, network.name, inputs, outputs,
                                       initializer=g.initializers)
        model = onnx.helper.make_model(graph, producer_name=PRODUCER_NAME,
                                       opset_imports=[onnx.helper.make_opsetid("",
                                                                               self._opset)])
        if self._ir_version > 0:
            model.ir_version = self._ir_version
        onnx.checker.check_model(model)
        return model

    def execute(self, file_path):
        """Write the ONNX model to ``file_path`` (atomically)."""
        from ... import _nnp_archive

        data = self.export_model_proto().SerializeToString()
        _nnp_archive.write_target(file_path, data, binary=True)
        return True
