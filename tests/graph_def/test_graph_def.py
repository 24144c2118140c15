"""nn.graph_def: recorded networks as nnabla 1.39 writes them, built again with the same
outputs as the graph they were recorded from, through save/load in every format."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

import graph_def_models as models
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla.core.modules import ConvBn, ResUnit

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "converter", "graph_def")


@pytest.mark.conformance
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_recorded_network_text_equals_what_nnabla_writes(name):
    ours = text_format.MessageToString(models.MODELS[name]().as_proto())
    with open(os.path.join(DATA, f"{name}.nntxt")) as stream:
        assert ours == stream.read()


def _mlp_reference(x, params):
    h = np.tanh(x @ params["fc1/affine/W"].d + params["fc1/affine/b"].d)
    z = h @ params["fc2/affine/W"].d + params["fc2/affine/b"].d
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("batch_size", [4, 7])
def test_calling_a_recorded_graph_computes_the_recorded_functions(batch_size):
    g = models.mlp()
    x = nn.Variable.from_numpy_array(np.random.RandomState(1).randn(batch_size, 6))
    y = g(x)
    y.forward()
    np.testing.assert_allclose(y.d, _mlp_reference(x.d, g.get_parameters()), rtol=1e-5,
                               atol=1e-6)


def test_arguments_beyond_the_inputs_are_ignored_as_in_nnabla(caplog):
    g = models.mlp()
    x = nn.Variable.from_numpy_array(np.random.RandomState(1).randn(3, 6))
    extra = nn.Variable((3, 6))
    with caplog.at_level("WARNING", logger="nnabla"):
        y = g(x, extra)
    assert "the last 1 are ignored" in caplog.text
    y.forward()
    np.testing.assert_allclose(y.d, _mlp_reference(x.d, g.get_parameters()), rtol=1e-5,
                               atol=1e-6)


def _load_and_run(path, x, batch_size=None):
    loaded = nn.graph_def.load(path, batch_size=batch_size)
    y = loaded()
    network = loaded.default_graph()
    network.variables[network.inputs[0]].variable_instance.d = x
    y.forward()
    return loaded, y


@pytest.mark.parametrize("ext", [".nnp", ".nntxt", ".protobuf"])
def test_a_saved_graph_loads_and_runs_at_another_batch_size(tmp_path, ext):
    path = str(tmp_path / f"model{ext}")
    models.mlp().save(path, include_parameter=True)
    nn.clear_parameters()
    x = np.random.RandomState(0).randn(7, 6).astype(np.float32)
    loaded, y = _load_and_run(path, x, batch_size=7)
    assert y.shape == (7, 3)
    np.testing.assert_allclose(y.d, _mlp_reference(x, loaded.get_parameters()), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("ext", [".nnp", ".nntxt", ".protobuf"])
def test_a_saved_cnn_loads_with_the_outputs_of_the_recorded_one(tmp_path, ext):
    g = models.cnn_flat()
    path = str(tmp_path / f"model{ext}")
    g.save(path, include_parameter=True)
    x = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    expected = g(nn.Variable.from_numpy_array(x))
    expected.forward()
    nn.clear_parameters()
    _, y = _load_and_run(path, x)
    np.testing.assert_allclose(y.d, expected.d, rtol=1e-5, atol=1e-6)


def test_a_module_graph_equals_the_module_called_on_variables():
    unit = ResUnit(8)
    proto_y = unit(nn.ProtoVariable((2, 4, 6, 6)))
    network = nn.graph_def.get_default_graph_by_variable(proto_y)
    x = nn.Variable.from_numpy_array(np.random.RandomState(3).randn(2, 4, 6, 6))
    y, ref = network(x), unit(x)
    F.sink(y, ref).forward()
    np.testing.assert_allclose(y.d, ref.d, rtol=1e-5, atol=1e-6)
    assert "@conv1/conv/W" in unit.get_parameters()
    assert "@res_unit/@conv2/Convolution" in network.functions


def test_graph_name_names_each_network_and_the_default_graph_finds_them():
    a, b = ConvBn(2), ConvBn(3)
    with nn.graph_def.graph() as g:
        with nn.graph_def.graph_name("first"):
            a(nn.ProtoVariable((1, 2, 4, 4)))
        with nn.graph_def.graph_name("second"):
            b(nn.ProtoVariable((1, 2, 4, 4)))
    assert list(g.networks) == ["first", "second"]
    assert g["second"].outputs == ["@conv_bn/BatchNormalization_out"]
    assert nn.graph_def.get_default_graph("first") is None   # recorded into g, not default


def test_create_graph_from_variable_uses_the_given_names_and_scope_names():
    x = nn.Variable((2, 3))
    y = F.relu(PF.affine(x, 4, name="fc"))
    g = nn.graph_def.create_graph_from_variable("net", y, names={"x": x, "y": y})
    assert g.net.inputs == ["x"] and g.net.outputs == ["y"]
    assert list(g.net.parameters) == ["fc/affine/W", "fc/affine/b"]


def test_sequential_records_its_modules_in_order():
    net = nn.Sequential(("a", ConvBn(2)), ("b", ConvBn(3)))
    with nn.graph_def.graph() as g:
        net(nn.ProtoVariable((1, 1, 4, 4)))
    types = [f.type for f in g.default_graph().forward_sequence()]
    assert types == ["Convolution", "BatchNormalization"] * 2
    assert list(g.networks) == ["sequential"]


def test_proto_variable_arithmetic_records_nnabla_s_functions():
    with nn.graph_def.graph() as g:
        x = nn.ProtoVariable((2, 2), name="x")
        y = nn.ProtoVariable((2, 2), name="y")
        _ = (x + y) * 2.0 - x / y
    types = [f.type for f in g.default_graph().forward_sequence()]
    assert types == ["Add2", "MulScalar", "Div2", "Sub2"]


def test_a_variable_not_output_of_any_network_is_an_error():
    with pytest.raises(ValueError, match="not the output variable"):
        nn.graph_def.get_default_graph_by_variable(nn.ProtoVariable((1,), name="nowhere"))


def test_saving_to_an_unknown_extension_names_it(tmp_path):
    with pytest.raises(ValueError, match=r"'\.onnx'"):
        models.mlp().save(str(tmp_path / "m.onnx"))


def test_a_wrong_argument_is_reported_while_recording():
    with pytest.raises(Exception, match="affine"):
        F.affine(nn.ProtoVariable((2, 3)), nn.Variable((4, 5)))


TOOL = os.path.join(os.path.dirname(__file__), "..", "..", "tools",
                    "record_converter_graph_def.py")
INTEROP_MODELS = ("mlp", "cnn_flat", "res_unit")
FORMATS = (".nnp", ".nntxt", ".protobuf")


def test_graphs_saved_here_load_in_nnabla_with_the_same_outputs(tmp_path):
    import json
    import subprocess

    reference = os.environ.get("NNABLA_REFERENCE_PYTHON")
    if not reference:
        pytest.skip("NNABLA_REFERENCE_PYTHON is not set: no nnabla 1.39 to load our files")
    for name in INTEROP_MODELS:
        nn.clear_parameters()
        nn.graph_def.reset_default_graph()
        g = models.MODELS[name]()
        network = g.default_graph()
        x = models.random_inputs(network, batch_size=network.variables[network.inputs[0]]
                                 .shape[0])[0]
        y = g(nn.Variable.from_numpy_array(x))
        y.forward()
        np.savez(str(tmp_path / f"{name}_io.npz"), x=x, y=y.d)
        for ext in FORMATS:
            g.save(str(tmp_path / f"{name}{ext}"), include_parameter=True)
    done = subprocess.run([reference, TOOL, "--check", str(tmp_path)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    differences = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(differences) == sorted(f"{m}{e}" for m in INTEROP_MODELS for e in FORMATS)
    assert max(differences.values()) < 1e-5, differences


NNP_DATA = os.path.join(os.path.dirname(__file__), "..", "data", "nnp")


@pytest.mark.parametrize("ext", FORMATS)
@pytest.mark.parametrize("model", ["mlp", "cnn_bn", "resnet", "lstm"])
def test_files_written_by_nnabla_load_as_graphs_with_its_outputs(model, ext):
    arrays = np.load(os.path.join(NNP_DATA, f"{model}_io.npz"))
    batch_axis = 1 if model == "lstm" else 0
    g = nn.graph_def.load(os.path.join(NNP_DATA, f"{model}{ext}"),
                          batch_size=arrays["x"].shape[batch_axis])
    network = g.default_graph()
    inputs = [nn.Variable.from_numpy_array(arrays["x"])]
    for name in network.inputs[1:]:      # the LSTM's initial states, zeros when recorded
        shape = network.variables[name].shape
        inputs.append(nn.Variable.from_numpy_array(np.zeros(shape, np.float32)))
    outputs = network(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    y = outputs[network.outputs.index("y")]
    y.forward()
    np.testing.assert_allclose(y.d, arrays["y"], rtol=1e-5, atol=1e-6)
