"""nnabla.utils.nnabla_pb2: wire compatibility with nnabla's NNP format; sync with nnabla.proto."""
import importlib.util
import os

from google.protobuf import descriptor_pb2
from nnabla.utils import _nnabla_descriptor, nnabla_pb2

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PROTO = os.path.join(ROOT, "nnabla_core", "utils", "nnabla.proto")


def _generator():
    path = os.path.join(ROOT, "tools", "gen_nnabla_proto.py")
    spec = importlib.util.spec_from_file_location("gen_nnabla_proto", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_descriptor_module_is_the_compiled_proto():
    # grpcio-tools (its bundled protoc) is a test dependency: noxfile.py TEST_DEPS
    compiled = descriptor_pb2.FileDescriptorProto.FromString(
        _generator().compile_descriptor(PROTO))
    shipped = descriptor_pb2.FileDescriptorProto.FromString(_nnabla_descriptor.SERIALIZED)
    assert compiled == shipped, "run tools/gen_nnabla_proto.py after editing nnabla.proto"


def test_field_numbers_are_nnabla_s():
    function = nnabla_pb2.Function.DESCRIPTOR.fields_by_name
    assert function["affine_param"].number == 1001
    assert function["convolution_param"].number == 1005
    assert nnabla_pb2.Solver.DESCRIPTOR.fields_by_name["sgd_param"].number == 100
    assert nnabla_pb2.Solver.DESCRIPTOR.fields_by_name["states"].number == 40
    assert nnabla_pb2.NNablaProtoBuf.DESCRIPTOR.fields_by_name["executor"].number == 600


def test_parameter_serializes_to_nnabla_bytes():
    parameter = nnabla_pb2.Parameter(variable_name="w")
    parameter.data.append(1.0)
    # field 1 string "w"; field 100 packed floats: tag 0x322 -> varint a2 06, 4 bytes of 1.0f
    assert parameter.SerializeToString() == b"\n\x01w\xa2\x06\x04\x00\x00\x80?"


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
