"""nnabla.utils.converter: NNP -> NNB bytes and NNP -> NNP text as nnabla 1.39 writes them
(recorded by tools/record_converter_nnb.py), parameter formats, splitting."""
import argparse
import json
import os
import struct
import zipfile

import numpy as np
import pytest

import nnabla as nn
from nnabla.utils.converter import convert_files, get_function_info
from nnabla.utils.converter.commands import DEFAULTS
from nnabla.utils.nnp_graph import NnpLoader

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "converter")
NNB = os.path.join(DATA, "nnb")
MODELS = ("mlp", "cnn", "arrays")
VARIANTS = {"": {}, ".b3": {"batch_size": 3}, ".api1": {"api": 1}}


def _args(**options):
    return argparse.Namespace(**{**DEFAULTS, **options})


@pytest.mark.conformance
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("model", MODELS)
def test_nnb_bytes_equal_what_nnabla_writes(tmp_path, model, variant):
    out = str(tmp_path / "out.nnb")
    convert_files(_args(export_format="NNB", **VARIANTS[variant]),
                  [os.path.join(NNB, f"{model}.nnp")], out)
    with open(out, "rb") as ours, open(os.path.join(NNB, f"{model}{variant}.nnb"), "rb") as ref:
        assert ours.read() == ref.read()


@pytest.mark.conformance
@pytest.mark.parametrize("model", MODELS)
def test_nnp_to_nnp_writes_nnabla_s_network_text(tmp_path, model):
    out = str(tmp_path / "out.nnp")
    assert convert_files(_args(), [os.path.join(NNB, f"{model}.nnp")], out)
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["nnp_version.txt", "network.nntxt", "parameter.protobuf"]
        text = archive.read("network.nntxt").decode()
    with open(os.path.join(NNB, f"{model}.converted.nntxt")) as ref:
        assert text == ref.read()


@pytest.mark.conformance
def test_function_arguments_are_nnabla_s_names_types_and_order():
    with open(os.path.join(DATA, "nnabla_function_arguments.json")) as stream:
        recorded = json.load(stream)
    ours = {name: [[a, arg["type"]] for a, arg in info.get("arguments", {}).items()]
            for name, info in get_function_info().items()}
    assert {k: ours.get(k) for k in recorded} == recorded


def _outputs(path, x):
    nn.clear_parameters()
    network = NnpLoader(path).get_network("net", batch_size=x.shape[0])
    next(iter(network.inputs.values())).d = x
    y = next(iter(network.outputs.values()))
    y.forward()
    return y.d.copy()


@pytest.mark.parametrize("option", ["nnp_parameter_h5", "nnp_parameter_nntxt", None])
def test_converted_nnp_gives_the_original_outputs_with_each_parameter_format(tmp_path, option):
    source = os.path.join(NNB, "cnn.nnp")
    out = str(tmp_path / "out.nnp")
    convert_files(_args(**({option: True} if option else {})), [source], out)
    x = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    np.testing.assert_array_equal(_outputs(out, x), _outputs(source, x))


def test_excluding_parameters_writes_no_parameter_member(tmp_path):
    out = str(tmp_path / "out.nnp")
    convert_files(_args(nnp_exclude_parameter=True), [os.path.join(NNB, "mlp.nnp")], out)
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["nnp_version.txt", "network.nntxt"]


def test_split_writes_one_file_per_range_with_those_functions(tmp_path):
    out = str(tmp_path / "part.nnp")
    convert_files(_args(split="0-1,2-3", nnp_import_executor_index=0),
                  [os.path.join(NNB, "mlp.nnp")], out)
    heads = {}
    for name, count in (("part_0_1.nnp", 2), ("part_2_3.nnp", 2)):
        with zipfile.ZipFile(str(tmp_path / name)) as archive:
            text = archive.read("network.nntxt").decode()
        assert text.count("function {") == count
        heads[name] = text
    assert 'type: "Affine"' in heads["part_0_1.nnp"]
    assert 'type: "Softmax"' in heads["part_2_3.nnp"]


def test_nnb_header_describes_the_network(tmp_path):
    out = str(tmp_path / "mlp.nnb")
    convert_files(_args(export_format="NNB", batch_size=5), [os.path.join(NNB, "mlp.nnp")], out)
    with open(out, "rb") as stream:
        data = stream.read()
    header = struct.unpack("IIiIiIiIiIiIII", data[:56])
    version, level, _, _, n_vars, _, n_funcs, _, n_in, _, n_out, _, n_blocks, size = header
    assert (version, n_funcs, n_in, n_out) == (2, 4, 1, 1)
    assert n_vars == 9          # x, 4 function outputs, 4 parameters
    assert len(data) == 56 + 4 * n_blocks + size


def test_an_unknown_export_format_is_named(tmp_path):
    with pytest.raises(ValueError, match="'TFLITE'"):
        convert_files(_args(export_format="TFLITE"), [os.path.join(NNB, "mlp.nnp")],
                      str(tmp_path / "x.tflite"))


def test_a_function_unknown_at_the_api_level_is_refused(tmp_path):
    import nnabla.functions as F
    from nnabla.utils.save import save

    x = nn.Variable((1, 3))
    y = F.mish(x)       # API level 1 of the C runtime has no Mish
    path = str(tmp_path / "m.nnp")
    save(path, {"networks": [{"name": "n", "batch_size": 1, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "e", "network": "n", "data": ["x"], "output": ["y"]}]})
    with pytest.raises(ValueError, match=r"Mish\(\) is not supported in current API Level"):
        convert_files(_args(export_format="NNB", api=1), [path], str(tmp_path / "x.nnb"))


_OLD_TABLE = """
Neural Network Layer:
  Affine:
    inputs: {x: {}, weight: {parameter: true}, bias: {optional: true, parameter: true}}
    arguments: {base_axis: {type: int64, default: '1'}}
    outputs: {y: {}}
Activation:
  Tanh: {inputs: {x: {}}, outputs: {y: {}}}
  Softmax:
    inputs: {x: {}}
    arguments: {axis: {type: int64, default: len(x.shape) - 1}}
    outputs: {y: {}}
  LeakyReLU:
    inputs: {x: {}}
    arguments: {alpha: {type: float, default: '0.1'}}
    outputs: {y: {}}
"""


@pytest.fixture
def old_release(tmp_path, monkeypatch):
    """An nnabla '0.9.9' whose function table has Affine, Tanh, Softmax, LeakyReLU."""
    home = tmp_path / "home"
    (home / ".nnabla").mkdir(parents=True)
    (home / ".nnabla" / "function_info_0.9.9.yaml").write_text(_OLD_TABLE)
    monkeypatch.setenv("HOME", str(home))
    return "0.9.9"


def test_nnp_for_an_older_release_keeps_the_functions_it_knows(tmp_path, old_release):
    pytest.importorskip("yaml", reason="function tables are YAML (pip install pyyaml)")
    out = str(tmp_path / "old.nnp")
    assert convert_files(_args(nnp_version=old_release), [os.path.join(NNB, "mlp.nnp")], out)
    x = np.random.RandomState(0).randn(2, 6).astype(np.float32)
    np.testing.assert_array_equal(_outputs(out, x), _outputs(os.path.join(NNB, "mlp.nnp"), x))


def test_nnp_for_an_older_release_refuses_functions_it_lacks(tmp_path, old_release):
    pytest.importorskip("yaml", reason="function tables are YAML (pip install pyyaml)")
    with pytest.raises(ValueError, match="BatchNormalization"):
        convert_files(_args(nnp_version=old_release), [os.path.join(NNB, "cnn.nnp")],
                      str(tmp_path / "old.nnp"))


def test_output_counts_used_for_older_releases_are_nnabla_s():
    from nnabla._spec import SPECS
    from nnabla.utils.converter._versions import NNABLA_OUTPUT_COUNTS

    with open(os.path.join(DATA, "nnabla_function_outputs.json")) as stream:
        recorded = json.load(stream)
    ours = {name: NNABLA_OUTPUT_COUNTS.get(name, len(SPECS[name].outputs)) for name in recorded}
    assert ours == {name: len(outputs) for name, outputs in recorded.items()}


def _dump_text(model, capsys, **flags):
    from nnabla.utils.converter import dump_files

    dump_files(_args(**flags), [os.path.join(NNB, f"{model}.nnp")])
    # the recorded text leaves out the import progress lines (checked in test_nnp_csrc.py)
    return "".join(line for line in capsys.readouterr().out.splitlines(True)
                   if not line.startswith(("Importing", " Expanding")))


@pytest.mark.conformance
@pytest.mark.parametrize("variant", ["", ".FV"])
@pytest.mark.parametrize("model", MODELS)
def test_dump_prints_what_nnabla_prints(capsys, model, variant):
    flags = {"dump_functions": True, "dump_variables": True} if variant else {}
    with open(os.path.join(NNB, f"{model}.dump{variant}.txt")) as ref:
        assert _dump_text(model, capsys, **flags) == ref.read()


@pytest.mark.conformance
@pytest.mark.parametrize("model", MODELS)
def test_nnb_template_writes_nnabla_s_settings_file(tmp_path, model):
    pytest.importorskip("yaml", reason="NNB settings are YAML (pip install pyyaml)")
    from nnabla.utils.converter import nnb_template

    out = str(tmp_path / "settings.yaml")
    nnb_template(_args(export_format="NNB", batch_size=-1),
                 [os.path.join(NNB, f"{model}.nnp")], out)
    with open(out) as ours, open(os.path.join(NNB, f"{model}.settings.yaml")) as ref:
        assert ours.read() == ref.read()


def test_nnb_settings_with_fixed_point_types_change_the_parameter_bytes(tmp_path):
    pytest.importorskip("yaml", reason="NNB settings are YAML (pip install pyyaml)")
    settings = tmp_path / "s.yaml"
    settings.write_text("variables:\n  fc1/affine/W: FIXED16_12\n")
    plain, fixed = str(tmp_path / "a.nnb"), str(tmp_path / "b.nnb")
    source = os.path.join(NNB, "mlp.nnp")
    convert_files(_args(export_format="NNB"), [source], plain)
    convert_files(_args(export_format="NNB", settings=[str(settings)]), [source], fixed)
    with open(plain, "rb") as a, open(fixed, "rb") as b:
        size_a, size_b = len(a.read()), len(b.read())
    assert size_a - size_b == 30 * 2        # 30 weights: 4 bytes each -> 2 bytes each
