"""nnabla.utils.nnabla_pb2: the NNP schema built from the spec is nnabla's, on the wire.

``tests/data/nnp_schema_1.39.json`` holds every message and field of nnabla 1.39.0's
``nnabla.proto``, recorded from the descriptor protoc compiled when the schema was still
generated from nnabla's own function tables.
"""
import doctest
import importlib.util
import json
import os

import pytest
from google.protobuf import descriptor_pb2, text_format

from nnabla import solvers
from nnabla._spec import SPECS, wire
from nnabla.utils import _nnp_schema, nnabla_pb2

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PROTO = os.path.join(ROOT, "nnabla_core", "utils", "nnabla.proto")
RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                        "nnp_schema_1.39.json")
_FIELD = descriptor_pb2.FieldDescriptorProto


def _generator():
    path = os.path.join(ROOT, "tools", "gen_nnabla_proto.py")
    spec = importlib.util.spec_from_file_location("gen_nnabla_proto", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _field_row(message, field):
    oneof = message.oneof_decl[field.oneof_index].name if field.HasField("oneof_index") else ""
    return [field.name, field.number, _FIELD.Label.Name(field.label)[len("LABEL_"):].lower(),
            _FIELD.Type.Name(field.type)[len("TYPE_"):].lower(), field.type_name, oneof,
            field.options.packed]


def _schema_table(file_proto):
    """Message name (nested: ``Outer.Inner``) -> map_entry flag and field rows, in order."""
    table = {}

    def walk(message_protos, prefix):
        for m in message_protos:
            table[prefix + m.name] = {"map_entry": m.options.map_entry,
                                      "fields": [_field_row(m, f) for f in m.field]}
            walk(m.nested_type, f"{prefix}{m.name}.")

    walk(file_proto.message_type, "")
    return table


def _built_file_proto():
    file_proto = descriptor_pb2.FileDescriptorProto()
    nnabla_pb2.DESCRIPTOR.CopyToProto(file_proto)
    return file_proto


def test_schema_equals_nnabla_1_39_field_for_field():
    with open(RECORDED) as f:
        recorded = json.load(f)
    built = _built_file_proto()
    assert {"name": built.name, "syntax": built.syntax, "package": built.package} == \
        recorded["file"]
    table = _schema_table(built)
    assert list(table) == list(recorded["messages"])
    differing = [name for name in table if table[name] != recorded["messages"][name]]
    assert differing == [], f"messages differing from nnabla 1.39.0's: {differing}"


def test_tracked_proto_is_what_the_tool_prints():
    with open(PROTO) as f:
        tracked = f.read()
    assert tracked == _generator().render(), "run tools/gen_nnabla_proto.py"


def test_printed_proto_compiles_to_the_built_descriptor():
    protoc = pytest.importorskip("grpc_tools.protoc")  # test dependency: noxfile.py TEST_DEPS
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "set.pb")
        folder, name = os.path.split(os.path.abspath(PROTO))
        assert protoc.main(["protoc", f"-I{folder}", f"--descriptor_set_out={out}", name]) == 0
        with open(out, "rb") as f:
            compiled = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file[0]
    assert compiled == _nnp_schema.file_descriptor()


def test_every_function_has_its_own_nnp_field_number():
    # A function nnabla's NNP does not know would get no parameter message; none exists yet.
    assert set(wire.FUNCTION_FIELDS) == set(SPECS), "give it nnabla's number in wire.py"
    numbers = sorted(wire.FUNCTION_FIELDS.values())
    assert numbers == list(range(1001, 1001 + len(numbers)))
    assert set(wire.ARG_TYPES) <= set(SPECS)
    unknown = [(f, a) for f, args in wire.ARG_TYPES.items() for a in args
               if a not in SPECS[f].arg_names]
    assert unknown == []


def test_every_solver_spec_has_a_field_number_and_its_arguments_in_the_schema():
    assert set(wire.SOLVER_FIELDS) == set(solvers.SPECS)
    for name, spec in solvers.SPECS.items():
        field_name = wire.SOLVER_FIELDS[name][0]
        message = nnabla_pb2.Solver.DESCRIPTOR.fields_by_name[field_name].message_type
        assert [f.name for f in message.fields] == [arg for arg, _ in spec.args], name


def test_field_numbers_are_nnabla_s():
    function = nnabla_pb2.Function.DESCRIPTOR.fields_by_name
    assert function["affine_param"].number == 1001
    assert function["convolution_param"].number == 1005
    assert function["einsum_param"].number == 1228
    assert nnabla_pb2.Solver.DESCRIPTOR.fields_by_name["sgd_param"].number == 100
    assert nnabla_pb2.Solver.DESCRIPTOR.fields_by_name["states"].number == 40
    assert nnabla_pb2.NNablaProtoBuf.DESCRIPTOR.fields_by_name["executor"].number == 600


def test_parameter_serializes_to_nnabla_bytes():
    parameter = nnabla_pb2.Parameter(variable_name="w")
    parameter.data.append(1.0)
    # field 1 string "w"; field 100 packed floats: tag 0x322 -> varint a2 06, 4 bytes of 1.0f
    assert parameter.SerializeToString() == b"\n\x01w\xa2\x06\x04\x00\x00\x80?"


def _varint(n):
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _length_delimited(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def test_protobuf_written_with_nnabla_s_field_numbers_parses():
    # Network 100 > Function 200 > type 2, convolution_param 1005 > pad 2 (Shape: packed
    # dim 1), group 5 (varint); Optimizer 400 > Solver 30 > adam_param 110 > alpha 1 (float).
    pad = _length_delimited(2, _length_delimited(1, _varint(1) + _varint(2)))
    convolution = _length_delimited(1005, pad + _varint(5 << 3) + _varint(3))
    function = _length_delimited(2, b"Convolution") + convolution
    adam = _length_delimited(110, _varint(1 << 3 | 5) + b"\x00\x00\x80?")
    data = (_length_delimited(100, _length_delimited(200, function))
            + _length_delimited(400, _length_delimited(30, adam)))
    nnp = nnabla_pb2.NNablaProtoBuf.FromString(data)
    parsed = nnp.network[0].function[0]
    assert parsed.type == "Convolution"
    assert list(parsed.convolution_param.pad.dim) == [1, 2]
    assert parsed.convolution_param.group == 3
    assert nnp.optimizer[0].solver.adam_param.alpha == 1.0
    assert nnp.SerializeToString() == data


NNTXT = """\
global_config { default_context { backends: "cpu:float" array_class: "CpuCachedArray" } }
network {
  name: "net"
  batch_size: 1
  variable { name: "x" type: "Buffer" shape { dim: -1 dim: 3 } }
  variable { name: "w" type: "Parameter" shape { dim: 3 dim: 2 }
             initializer { type: "Normal" multiplier: 0.01 } }
  function { name: "Affine" type: "Affine" input: "x" input: "w" output: "y"
             affine_param { base_axis: 1 } }
  function { name: "Sum" type: "Sum" input: "y" output: "s"
             sum_param { axes: 0 axes: 1 keep_dims: false } }
}
optimizer { name: "opt" network_name: "net"
            solver { type: "AdaBelief" adabelief_param { alpha: 0.001 amsgrad: true } } }
executor { name: "run" network_name: "net" output_variable { variable_name: "s" } }
"""


def test_nntxt_written_with_nnabla_s_field_names_round_trips():
    nnp = text_format.Parse(NNTXT, nnabla_pb2.NNablaProtoBuf())
    network = nnp.network[0]
    assert network.function[0].WhichOneof("parameter") == "affine_param"
    assert list(network.function[1].sum_param.axes) == [0, 1]
    assert nnp.optimizer[0].solver.adabelief_param.amsgrad
    back = nnabla_pb2.NNablaProtoBuf.FromString(nnp.SerializeToString())
    assert back == nnp
    assert text_format.Parse(text_format.MessageToString(back), nnabla_pb2.NNablaProtoBuf()) \
        == nnp


def test_network_round_trips_through_bytes():
    nnp = nnabla_pb2.NNablaProtoBuf()
    function = nnp.network.add(name="net").function.add(name="c", type="Convolution")
    function.convolution_param.pad.dim.extend([1, 1])
    function.convolution_param.group = 2
    back = nnabla_pb2.NNablaProtoBuf.FromString(nnp.SerializeToString())
    assert back == nnp
    assert back.network[0].function[0].WhichOneof("parameter") == "convolution_param"


def test_solver_states_map_holds_state_parameters():
    optimizer = nnabla_pb2.Optimizer()
    state = optimizer.solver.states["w"]
    state.t = 3
    state.state_parameter["m"].shape.dim.extend([2])
    back = nnabla_pb2.Optimizer.FromString(optimizer.SerializeToString())
    assert back.solver.states["w"].t == 3
    assert list(back.solver.states["w"].state_parameter["m"].shape.dim) == [2]


def test_schema_modules_doctests_pass():
    assert doctest.testmod(_nnp_schema).failed == 0
    assert doctest.testmod(nnabla_pb2).failed == 0
