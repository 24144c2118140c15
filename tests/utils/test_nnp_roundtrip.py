"""Every function type survives save -> load with its type and arguments, in all three
formats; real networks give identical outputs after save -> load, at any batch size."""
import io
import math

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla._dispatch import call
from nnabla._spec import SPECS
from nnabla.testing.function_cases.all_cases import ALL_CASES
from nnabla.utils import nnabla_pb2
from nnabla.utils._nnp_functions import read_arguments
from nnabla.utils.load import load
from nnabla.utils.nnp_graph import NnpLoader
from nnabla.utils.save import save

FIRST_CASE = {}
for _case in ALL_CASES:
    FIRST_CASE.setdefault(_case.name, _case)


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _one_function_graph(case):
    rng = np.random.RandomState(case.seed)
    spec = SPECS[case.name]
    inputs = []
    for gen in case.inputs:
        if gen is None:
            inputs.append(None)
        elif isinstance(gen, list):
            inputs.extend(nn.Variable.from_numpy_array(g.make(rng)) for g in gen)
        else:
            inputs.append(nn.Variable.from_numpy_array(gen.make(rng)))
    out = call(spec, tuple(inputs), dict(case.args), -1, None)
    outs = out if isinstance(out, tuple) else (out,)
    return outs[0].parent, {f"y{i}": o for i, o in enumerate(outs)}


def _close(a, b):
    if b is None:                         # None is not storable: the field's default is read
        return a in (None, 0, 0.0, False, ())
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b) or math.isclose(a, b, rel_tol=1e-7)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    return a == b


def _saved_function(path):
    proto = nnabla_pb2.NNablaProtoBuf()
    if path.endswith(".protobuf"):
        proto.ParseFromString(open(path, "rb").read())
    else:
        from google.protobuf import text_format
        text_format.Merge(open(path).read(), proto)
    return proto.network[0].function[0]


def _write_sink_network(path, function):
    from nnabla.utils._nnp_functions import write_arguments
    proto = nnabla_pb2.NNablaProtoBuf()
    net = proto.network.add(name="n", batch_size=1)
    names = []
    for i, v in enumerate(function.inputs):
        var = net.variable.add(name=f"x{i}", type="Buffer")
        var.shape.dim.extend(v.shape)
        names.append(var.name)
    net.variable.add(name="y0", type="Buffer")
    f = net.function.add(name="Sink", type="Sink", input=names, output=["y0"])
    write_arguments(f, "Sink", function.args)
    if path.endswith(".protobuf"):
        open(path, "wb").write(proto.SerializeToString())
    else:
        from google.protobuf import text_format
        open(path, "w").write(text_format.MessageToString(proto))


def test_every_spec_function_has_a_case_for_the_round_trip():
    assert sorted(set(SPECS) - set(FIRST_CASE)) == []


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("ext", [".nntxt", ".protobuf"])
def test_function_type_and_arguments_survive_save_and_load(name, ext, tmp_path):
    case = FIRST_CASE[name]
    function, outputs = _one_function_graph(case)
    expected = {k: (tuple(v) if isinstance(v, list) else v) for k, v in function.args.items()}
    if name == "Reshape" and -1 in expected["shape"]:    # saved resolved, as nnabla does
        expected["shape"] = tuple(outputs["y0"].shape)
    path = str(tmp_path / f"net{ext}")
    if name == "Sink":       # nnabla's save leaves sinks out; a file may still hold one
        _write_sink_network(path, function)
    else:
        save(path, {"networks": [{"name": "n", "batch_size": 1, "outputs": outputs,
                                  "names": {}}]}, variable_batch_size=False)
    stored = _saved_function(path)
    assert stored.type == name
    loaded = read_arguments(stored)
    if name == "SyncBatchNormalization":
        expected["comm"] = None          # the communicator is not part of the file
    assert set(loaded) == set(expected)
    for key in expected:
        assert _close(loaded[key], expected[key]), (key, loaded[key], expected[key])
    if not SPECS[name].stochastic and name not in ("SyncBatchNormalization",):
        net = NnpLoader(path).get_network("n")
        built = net.outputs[stored.output[0]].parent
        assert built.info.type_name == name
        rebuilt = {k: (tuple(v) if isinstance(v, list) else v) for k, v in built.args.items()}
        for key in expected:
            if key != "comm":
                assert _close(rebuilt[key], expected[key]), (key, rebuilt[key], expected[key])


def _mlp():
    x = nn.Variable((4, 6))
    h = F.tanh(PF.affine(x, 8, name="fc1"))
    return x, PF.affine(h, 3, name="fc2")


def _cnn_bn():
    x = nn.Variable((4, 2, 8, 8))
    h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="conv1")
    h = F.relu(PF.batch_normalization(h, batch_stat=False, name="bn1"))
    h = F.max_pooling(h, (2, 2))
    h = F.reshape(h, (4, -1))
    return x, PF.affine(h, 5, name="fc")


def _lstm():
    x = nn.Variable((5, 4, 3))                      # (time, batch, features)
    h = nn.Variable.from_numpy_array(np.zeros((1, 1, 4, 6), np.float32))
    c = nn.Variable.from_numpy_array(np.zeros((1, 1, 4, 6), np.float32))
    y, _, _ = PF.lstm(x, h, c, name="lstm")
    return x, F.sum(y, axis=0)


def _resnet():
    x = nn.Variable((4, 3, 8, 8))
    h = F.relu(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="stem"))
    for i in range(2):
        r = PF.convolution(h, 4, (3, 3), pad=(1, 1), name=f"block{i}/conv1")
        r = F.relu(PF.batch_normalization(r, batch_stat=False, name=f"block{i}/bn1"))
        r = PF.convolution(r, 4, (3, 3), pad=(1, 1), name=f"block{i}/conv2")
        h = F.relu(h + r)
    h = F.global_average_pooling(h)
    return x, PF.affine(h, 10, name="head")


NETWORKS = {"mlp": _mlp, "cnn_bn": _cnn_bn, "lstm": _lstm, "resnet": _resnet}


def _randomize_parameters(rng):
    for p in nn.get_parameters(grad_only=False).values():
        p.d = rng.randn(*p.shape).astype(np.float32) * 0.3
        if p.name in ("var",) or str(p.name).endswith("var"):
            p.d = np.abs(p.d) + 0.5


@pytest.mark.parametrize("ext", [".nnp", ".nntxt", ".protobuf"])
@pytest.mark.parametrize("kind", sorted(NETWORKS))
def test_network_outputs_are_identical_after_save_and_load(kind, ext, tmp_path):
    rng = np.random.RandomState(0)
    x, y = NETWORKS[kind]()
    _randomize_parameters(rng)
    x.d = rng.randn(*x.shape)
    y.forward()
    expected = y.d.copy()
    path = str(tmp_path / f"model{ext}")
    batch = x.shape[0] if kind != "lstm" else 5
    save(path, {"networks": [{"name": "net", "batch_size": batch, "outputs": {"y": y},
                              "names": {"x": x}}],
                "executors": [{"name": "run", "network": "net", "data": ["x"],
                               "output": ["y"]}]},
         include_params=True, variable_batch_size=kind != "lstm")
    nn.clear_parameters()
    info = load(path)
    net = info.executors["run"].network
    net.variables["x"].variable_instance.d = x.d
    out = net.variables["y"].variable_instance
    out.forward()
    np.testing.assert_array_equal(out.d, expected)


@pytest.mark.parametrize("kind", ["mlp", "cnn_bn", "resnet"])
def test_a_network_saved_with_variable_batch_size_runs_at_any_batch_size(kind):
    rng = np.random.RandomState(1)
    x, y = NETWORKS[kind]()
    _randomize_parameters(rng)
    x.d = rng.randn(*x.shape)
    y.forward()
    expected = y.d.copy()
    buffer = io.BytesIO()
    save(buffer, {"networks": [{"name": "net", "batch_size": 4, "outputs": {"y": y},
                                "names": {"x": x}}]}, extension=".nnp")
    text = buffer.getvalue()
    assert b"dim: -1" in text
    for batch in (1, 3, 7):
        buffer.seek(0)
        nn.clear_parameters()
        net = NnpLoader(buffer, extension=".nnp").get_network("net", batch_size=batch)
        assert net.inputs["x"].shape == (batch,) + x.shape[1:]
        data = np.concatenate([x.d] * 2)[:batch]
        net.inputs["x"].d = data
        net.outputs["y"].forward()
        np.testing.assert_allclose(net.outputs["y"].d, np.concatenate([expected] * 2)[:batch],
                                   rtol=1e-5, atol=1e-6)


def test_variable_batch_size_false_keeps_the_batch_dimension():
    x, y = _mlp()
    buffer = io.StringIO()
    save(buffer, {"networks": [{"name": "net", "batch_size": 4, "outputs": {"y": y},
                                "names": {"x": x}}]},
         extension=".nntxt", variable_batch_size=False)
    assert "dim: -1" not in buffer.getvalue()
    assert "dim: 4" in buffer.getvalue()
