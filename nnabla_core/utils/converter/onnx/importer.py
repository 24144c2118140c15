"""ONNX -> NNP (``nnabla_cli convert y.onnx x.nnp``).

The graph's inputs (those without an initializer) become the executor's data variables, its
outputs the output variables, initializers and ``Constant`` nodes the parameters (or the
arguments of the functions that take them as attributes in NNP). Shapes come from ONNX shape
inference and are checked against the NNP functions' own. :data:`~._import_ops.IMPORTERS`
lists the ONNX operators converted.
"""
from __future__ import annotations

import types

from ._require import require_onnx
from . import _import_layers  # noqa: F401  (registers its importers)
from ._import_ops import IMPORTERS, Unsupported
from ._nnp_builder import NnpBuilder


def supported_operators():
    """The ONNX operators the importer converts."""
    return sorted(IMPORTERS)


class OnnxImporter:
    """Reads an ONNX model (one file) into an ``nnp`` object (``protobuf``,
    ``other_files``) for the exporters of ``nnabla.utils.converter``."""

    def __init__(self, *files):
        if len(files) != 1:
            raise ValueError(f"ONNX import: give one .onnx file; given {list(files)}")
        self._file = files[0]
        self._onnx = require_onnx()

    def execute(self):
        onnx = self._onnx
        model = onnx.load(self._file)
        try:
            model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        except Exception as error:      # onnx raises several types here
            raise ValueError(f"ONNX import: {self._file!r}: shape inference failed: "
                             f"{error}") from None
        return types.SimpleNamespace(protobuf=convert_model(onnx, model), other_files=[])


def _shape(value_info):
    dims = value_info.type.tensor_type.shape.dim
    if any(not d.HasField("dim_value") for d in dims):
        return None
    return tuple(d.dim_value for d in dims)


def _fold(ctx, node):
    """Evaluate a node whose inputs are all constants (a reshaped weight ...) with onnx's
    reference evaluator; its outputs become constants. Returns whether it was folded."""
    if not node.input or any(n and n not in ctx.constants for n in node.input):
        return False
    if node.op_type in ("RandomNormal", "RandomUniform", "Constant"):
        return False
    from onnx.reference import ReferenceEvaluator

    feeds = {n: ctx.constants[n] for n in node.input if n}
    try:
        values = ReferenceEvaluator(node).run(None, feeds)
    except Exception:       # an operator the reference cannot run: convert it instead
        return False
    for name, value in zip(node.output, values):
        ctx.constants[name] = value
    return True


def convert_model(onnx, model):
    """The ``NNablaProtoBuf`` of an ``onnx.ModelProto`` (shapes inferred)."""
    from onnx import numpy_helper

    graph = model.graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    shapes = {}
    for info in list(graph.input) + list(graph.value_info) + list(graph.output):
        shapes[info.name] = _shape(info)
    inputs = [i for i in graph.input if i.name not in constants]
    for i in inputs:
        if shapes.get(i.name) is None:
            raise ValueError(f"ONNX import: input {i.name!r} has no fixed shape; give the "
                             f"model static input shapes")
    batch = shapes[inputs[0].name][0] if inputs and shapes[inputs[0].name] else 1
    nnp = NnpBuilder(graph.name or "network", batch)
    for i in inputs:
        nnp.variable(i.name, shapes[i.name])
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
    ctx = types.SimpleNamespace(nnp=nnp, constants=constants, shapes=shapes, onnx=onnx,
                                opset=opset)
    for node in graph.node:
        if _fold(ctx, node):
            continue
        importer = IMPORTERS.get(node.op_type)
        if importer is None:
            raise Unsupported(f"ONNX import: node {node.name or node.output[0]!r} is a "
                              f"{node.op_type!r}, which is not imported; imported operators: "
                              f"{', '.join(supported_operators())}")
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        importer(ctx, node, attrs)
    for o in graph.output:
        if o.name not in nnp.shapes:
            raise ValueError(f"ONNX import: output {o.name!r} is not computed by the graph")
        if shapes.get(o.name) and tuple(shapes[o.name]) != nnp.shapes[o.name]:
            raise ValueError(f"ONNX import: output {o.name!r} has shape {shapes[o.name]} in "
                             f"ONNX; the NNP functions give {nnp.shapes[o.name]}")
    executor = nnp.proto.executor.add(name="runtime", network_name=nnp.network.name)
    for i in inputs:
        executor.data_variable.add(variable_name=i.name, data_name=i.name)
    for o in graph.output:
        executor.output_variable.add(variable_name=o.name, data_name=o.name)
    for p in nnp.proto.parameter:
        executor.parameter_variable.add(variable_name=p.variable_name)
    return nnp.proto
