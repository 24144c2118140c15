"""Loaders refuse unsafe or invalid NNP files with an error naming the file and member;
saves are atomic."""
import io
import os
import zipfile

import h5py
import numpy as np
import pytest

import nnabla as nn
import nnabla.parametric_functions as PF
from nnabla.utils import _nnp_archive, nnabla_pb2
from nnabla.utils._nnp_functions import NnpFormatError
from nnabla.utils.load import load
from nnabla.utils.nnp_graph import NnpLoader
from nnabla.utils.save import save

GOOD_TEXT = """network { name: "net" batch_size: 1
  variable { name: "x" type: "Buffer" shape { dim: 1 dim: 3 } }
  variable { name: "y" type: "Buffer" shape { dim: 1 dim: 3 } }
  function { name: "ReLU" type: "ReLU" input: "x" output: "y" relu_param { } } }
"""


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members:
            archive.writestr(name, data)
    return str(path)


def test_a_valid_hand_written_file_loads(tmp_path):
    path = tmp_path / "ok.nntxt"
    path.write_text(GOOD_TEXT)
    net = NnpLoader(str(path)).get_network("net")
    net.inputs["x"].d = [[-1, 0, 2]]
    net.outputs["y"].forward()
    np.testing.assert_array_equal(net.outputs["y"].d, [[0, 0, 2]])


@pytest.mark.parametrize("member", ["/abs/network.nntxt", "../evil.nntxt", "a/../../b.nntxt",
                                    "C:/x.nntxt", "dir\\x.nntxt"])
def test_unsafe_member_names_are_refused(tmp_path, member):
    path = _zip(tmp_path / "bad.nnp", [(member, GOOD_TEXT)])
    with pytest.raises(NnpFormatError, match="bad.nnp.*member"):
        NnpLoader(path)


def test_duplicate_members_are_refused(tmp_path):
    path = tmp_path / "dup.nnp"
    with pytest.warns(UserWarning, match="Duplicate name"):
        _zip(path, [("network.nntxt", GOOD_TEXT), ("network.nntxt", GOOD_TEXT)])
    with pytest.raises(NnpFormatError, match="dup.nnp.*'network.nntxt' appears twice"):
        NnpLoader(str(path))


def test_a_decompression_bomb_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "bomb.nnp"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("network.nntxt", " " * (4 << 20))
    monkeypatch.setitem(_nnp_archive.LIMITS, "ratio_floor_bytes", 1 << 20)
    with pytest.raises(NnpFormatError, match="bomb.nnp.*decompression bomb"):
        NnpLoader(str(path))
    monkeypatch.setitem(_nnp_archive.LIMITS, "member_bytes", 1 << 20)
    with pytest.raises(NnpFormatError, match="bomb.nnp.*network.nntxt.*limit"):
        NnpLoader(str(path))


def test_random_bytes_are_not_an_nnp_file(tmp_path):
    path = tmp_path / "noise.nnp"
    path.write_bytes(np.random.RandomState(0).bytes(300))
    with pytest.raises(NnpFormatError, match="noise.nnp.*not an NNP"):
        NnpLoader(str(path))


def test_malformed_text_and_protobuf_are_refused(tmp_path):
    path = _zip(tmp_path / "m.nnp", [("network.nntxt", "network { name: ")])
    with pytest.raises(NnpFormatError, match="m.nnp.*network.nntxt.*malformed NNP text"):
        NnpLoader(path)
    binary = tmp_path / "m.protobuf"
    binary.write_bytes(b"\xff\xff\xff\xff\x0f\x01")
    with pytest.raises(NnpFormatError, match="m.protobuf.*malformed NNP protobuf"):
        NnpLoader(str(binary))


@pytest.mark.parametrize("change, message", [
    (('type: "ReLU"', 'type: "NoSuchFunction"'), "unknown function type 'NoSuchFunction'"),
    (('input: "x"', 'input: "ghost"'), "variable 'ghost', which the network does not declare"),
    (('shape { dim: 1 dim: 3 } }\n  function', 'shape { dim: 1 dim: 4 } }\n  function'),
     r"output 'y' is declared with shape \(1, 4\); the function computes \(1, 3\)"),
    (('input: "x" output: "y"', 'input: "x" output: "y" output: "z"'), "does not declare"),
])
def test_invalid_networks_are_refused_naming_what_is_wrong(tmp_path, change, message):
    path = tmp_path / "bad.nntxt"
    path.write_text(GOOD_TEXT.replace(*change))
    with pytest.raises(NnpFormatError, match=message):
        NnpLoader(str(path)).get_network("net")


def test_a_missing_parameter_is_refused(tmp_path):
    text = GOOD_TEXT.replace('variable { name: "y"', 'variable { name: "w" type: "Parameter" '
                             'shape { dim: 3 dim: 3 } }\n  variable { name: "y"')
    text = text.replace('type: "ReLU" input: "x" output: "y" relu_param { }',
                        'type: "Affine" input: "x" input: "w" output: "y" '
                        'affine_param { base_axis: 1 }')
    path = tmp_path / "noparam.nntxt"
    path.write_text(text)
    with pytest.raises(NnpFormatError, match="parameter 'w' is neither in the parameters"):
        load(str(path))
    info = load(str(path), exclude_parameter=True)        # explicitly without parameters
    assert info.networks["net"].variables["y"].variable_instance.shape == (1, 3)


def test_parameter_data_inconsistent_with_its_shape_is_refused(tmp_path):
    proto = nnabla_pb2.NNablaProtoBuf()
    p = proto.parameter.add(variable_name="w", need_grad=True)
    p.shape.dim.extend([2, 2])
    p.data.extend([1.0, 2.0, 3.0])
    path = tmp_path / "p.protobuf"
    path.write_bytes(proto.SerializeToString())
    with pytest.raises(ValueError, match=r"p.protobuf.*'w' has shape \(2, 2\).*holds 3"):
        nn.load_parameters(str(path))
    assert "w" not in nn.get_parameters(grad_only=False)


def test_hdf5_external_storage_inside_an_nnp_is_refused(tmp_path):
    h5 = tmp_path / "ext.h5"
    (tmp_path / "raw.bin").write_bytes(np.zeros(4, np.float32).tobytes())
    with h5py.File(h5, "w") as f:
        d = f.create_dataset("w", (4,), "f4", external=[(str(tmp_path / "raw.bin"), 0, 16)])
        d.attrs["need_grad"] = True
    path = _zip(tmp_path / "e.nnp", [("network.nntxt", GOOD_TEXT),
                                     ("parameter.h5", h5.read_bytes())])
    with pytest.raises(NnpFormatError, match="e.nnp.*parameter.h5.*external storage"):
        NnpLoader(path)


def test_save_is_atomic_and_leaves_the_old_file_on_failure(tmp_path, monkeypatch):
    x = nn.Variable((2, 3))
    y = PF.affine(x, 2, name="fc")
    contents = {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                              "names": {"x": x}}]}
    path = str(tmp_path / "model.nnp")
    save(path, contents)
    before = open(path, "rb").read()

    def broken(stream, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", broken)
    with pytest.raises(OSError, match="disk full"):
        save(path, contents)
    assert open(path, "rb").read() == before
    assert os.listdir(tmp_path) == ["model.nnp"]


def test_save_rejects_an_executor_naming_an_unknown_variable():
    x = nn.Variable((2, 3))
    y = PF.affine(x, 2, name="fc")
    contents = {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "run", "network": "net", "data": ["nope"]}]}
    with pytest.raises(ValueError, match="executor 'run' lists data variable 'nope'"):
        save(io.BytesIO(), contents, extension=".nnp")
