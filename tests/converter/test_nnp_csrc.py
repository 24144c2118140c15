"""nnabla.utils.converter: NNP -> C sources (``nnabla_cli convert -O CSRC``) as nnabla 1.39
writes them (recorded by tools/record_converter_csrc.py), and what the sources say checked
against the model itself.

Compiling the sources needs the nnabla C runtime (``nnablart/functions.h`` and
``libnnablart_functions``), which is not installed here and would have to be downloaded, so
no test compiles them.
"""
import argparse
import os
import re
import zipfile

import h5py
import numpy as np
import pytest
from google.protobuf import text_format

from nnabla.utils import nnabla_pb2
from nnabla.utils.cli.cli import main
from nnabla.utils.converter import convert_files, formats
from nnabla.utils.converter.commands import DEFAULTS

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "converter")
# model -> its .nnp (saved by nnabla 1.39); "generator" has a generator variable in its
# executor, "functions" many function types and argument kinds (string modes, lists, floats)
MODELS = {"mlp": os.path.join(DATA, "nnb", "mlp.nnp"), "cnn": os.path.join(DATA, "nnb", "cnn.nnp"),
          "arrays": os.path.join(DATA, "nnb", "arrays.nnp"),
          "generator": os.path.join(DATA, "csrc", "generator.nnp"),
          "functions": os.path.join(DATA, "csrc", "functions.nnp")}
VARIANTS = {"": 1, ".b3": 3, ".bfile": -1}


def _args(**options):
    return argparse.Namespace(**{**DEFAULTS, **options})


def _read_folder(folder):
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as stream:
            files[name] = stream.read()
    return files


@pytest.mark.conformance
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("model", sorted(MODELS))
def test_csrc_files_equal_what_nnabla_writes(tmp_path, model, variant):
    out = tmp_path / "out"
    assert convert_files(_args(export_format="CSRC", batch_size=VARIANTS[variant]),
                         [MODELS[model]], str(out))
    ours = _read_folder(out)
    reference = _read_folder(os.path.join(DATA, "csrc", f"{model}{variant}"))
    assert sorted(ours) == sorted(reference)
    for name in reference:
        assert ours[name] == reference[name], name


def test_cli_converts_into_a_folder_and_says_which_batch_size(tmp_path, capsys):
    out = tmp_path / "c_sources"
    code = main(["convert", "-O", "CSRC", "-b", "-1",
                 os.path.join(DATA, "nnb", "cnn.nnp"), str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "CSRC: Using batch size from input file.\n" in printed
    assert "Using network [net].\n" in printed
    assert _read_folder(out) == _read_folder(os.path.join(DATA, "csrc", "cnn.bfile"))
    assert "CSRC" in formats.export_name


@pytest.mark.conformance
@pytest.mark.parametrize("command, recorded", [
    ("convert", "cnn.bfile.stdout.txt"), ("nnb_template", "cnn.nnb_template.stdout.txt")])
def test_console_lines_are_nnabla_s(tmp_path, capsys, monkeypatch, command, recorded):
    from nnabla.utils.converter import nnb_template

    monkeypatch.chdir(DATA)     # the file is named as given, relative like the recording
    if command == "convert":
        convert_files(_args(export_format="CSRC", batch_size=-1), ["nnb/cnn.nnp"],
                      str(tmp_path / "out"))
    else:
        pytest.importorskip("yaml", reason="NNB settings are YAML (pip install pyyaml)")
        nnb_template(_args(export_format="NNB", batch_size=-1), ["nnb/cnn.nnp"],
                     str(tmp_path / "s.yaml"))
    with open(os.path.join(DATA, "csrc", recorded)) as stream:
        assert capsys.readouterr().out == stream.read()


def test_output_that_is_a_file_is_refused(tmp_path):
    target = tmp_path / "taken"
    target.write_text("not a folder")
    with pytest.raises(ValueError, match="is not a folder"):
        convert_files(_args(export_format="CSRC"), [os.path.join(DATA, "nnb", "mlp.nnp")],
                      str(target))
    assert target.read_text() == "not a folder"


def _model_proto(model):
    """The network text of the model's .nnp (read with protobuf alone)."""
    proto = nnabla_pb2.NNablaProtoBuf()
    with zipfile.ZipFile(os.path.join(DATA, "nnb", f"{model}.nnp")) as archive:
        text_format.Merge(archive.read("network.nntxt").decode(), proto)
    return proto


def _model_parameters(model, folder):
    """The model's parameters, read from its parameter.h5 with h5py alone."""
    with zipfile.ZipFile(os.path.join(DATA, "nnb", f"{model}.nnp")) as archive:
        archive.extract("parameter.h5", folder)
    parameters = {}
    with h5py.File(os.path.join(folder, "parameter.h5"), "r") as stream:
        stream.visititems(lambda name, item: parameters.__setitem__(name, item[()])
                          if isinstance(item, h5py.Dataset) else None)
    return parameters


def _c_arrays(text):
    """``{name: values}`` of each ``float name[] = {...};`` in C source."""
    arrays = {}
    for name, body in re.findall(r"float (\w+)\[\] = \{(.*?)\};", text, re.S):
        arrays[name] = np.array([float(v) for v in body.replace(",", " ").split()])
    return arrays


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_parameter_arrays_hold_the_model_values_affine_weights_transposed(tmp_path, model):
    convert_files(_args(export_format="CSRC"), [os.path.join(DATA, "nnb", f"{model}.nnp")],
                  str(tmp_path))
    arrays = _c_arrays((tmp_path / "net_parameters.c").read_text())
    parameters = _model_parameters(model, str(tmp_path / "h5"))
    network = _model_proto(model).network[0]
    index = {v.name: n for n, v in enumerate(network.variable)}
    affine_weights = {f.input[1] for f in network.function if f.type == "Affine"}
    assert len(arrays) == len(parameters)
    for name, values in parameters.items():
        values = values.astype(np.float32)
        if name in affine_weights:
            values = values.reshape(values.shape[0], -1).T
        got = arrays[f"net_parameter{index[name]}"].astype(np.float32)
        np.testing.assert_array_equal(got, values.flatten())


def test_sizes_and_inference_order_follow_the_network(tmp_path):
    convert_files(_args(export_format="CSRC", batch_size=3),
                  [os.path.join(DATA, "nnb", "cnn.nnp")], str(tmp_path))
    header = (tmp_path / "net_inference.h").read_text()
    source = (tmp_path / "net_inference.c").read_text()
    # cnn: input 3x3x8x8 at batch 3, output 3x10
    assert "#define NNABLART_NET_INPUT0_SIZE (576)" in header
    assert "#define NNABLART_NET_OUTPUT0_SIZE (30)" in header
    network = _model_proto("cnn").network[0]
    calls = re.findall(r"exec_(\w+)\(&\(c->f(\d+)\)\);", source)
    snake = {"Convolution": "convolution", "BatchNormalization": "batch_normalization",
             "ReLU": "relu", "MaxPooling": "max_pooling", "LeakyReLU": "leaky_relu",
             "AveragePooling": "average_pooling", "Affine": "affine"}
    assert calls == [(snake[f.type], str(n)) for n, f in enumerate(network.function)]
    # every activation buffer is at least as large as each variable placed in it
    sizes = [int(s) for s in re.search(r"int actual_buf_sizes\[\d+\] = \{(.*?)\};", source,
                                       re.S).group(1).replace(",", " ").split()]
    for n, v in enumerate(network.variable):
        placed = re.search(rf"\(c->v{n}\)\.data = c->buffer_pool\[(\d+)\];", source)
        if v.type == "Buffer":
            elements = int(np.prod([d if d > 0 else 3 for d in v.shape.dim]))
            assert sizes[int(placed.group(1))] >= elements, v.name
        else:
            assert placed is None
