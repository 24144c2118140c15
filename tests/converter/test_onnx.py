"""NNP -> ONNX: every exported function type runs in onnxruntime with our outputs; ONNX ->
NNP: our exported models and ResNet/MobileNet-style ONNX models give onnxruntime's outputs."""
import argparse
import zipfile

import numpy as np
import pytest

import nnabla as nn
from nnabla.utils.converter import convert_files
from nnabla.utils.converter.commands import DEFAULTS
from nnabla.utils.nnp_graph import NnpLoader
from nnabla.utils.save import save

onnx = pytest.importorskip("onnx", reason="the ONNX converter tests need 'onnx' "
                                          "(pip install 'nnabla[onnx]')")
ort = pytest.importorskip("onnxruntime", reason="ONNX models are run with onnxruntime")

import onnx_cases  # noqa: E402
import onnx_models  # noqa: E402


def _args(**options):
    return argparse.Namespace(**{**DEFAULTS, **options})


def _save_case(path, kind):
    shapes, build, _ = onnx_cases.CASES[kind]
    nn.clear_parameters()
    np.random.seed(7)
    xs = [nn.Variable(s) for s in shapes]
    y = build(*xs)
    ys = list(y) if isinstance(y, tuple) else [y]
    for name, p in nn.get_parameters(grad_only=False).items():
        p.d = np.random.RandomState(abs(hash(name)) % 1000).uniform(0.5, 1.5, p.shape)
    names = {f"x{i}": x for i, x in enumerate(xs)}
    outputs = {f"y{i}": v for i, v in enumerate(ys)}
    save(path, {"networks": [{"name": "net", "batch_size": shapes[0][0], "outputs": outputs,
                              "names": names}],
                "executors": [{"name": "run", "network": "net", "data": list(names),
                               "output": list(outputs)}]})
    return list(names), list(outputs)


def _case_inputs(kind):
    shapes, _, values = onnx_cases.CASES[kind]
    return onnx_cases.inputs(shapes, *values) if isinstance(values, tuple) else \
        onnx_cases.inputs(shapes, values)


def _run_nnp(path, feeds, outputs):
    nn.clear_parameters()
    network = NnpLoader(path).get_network("net")
    for name, value in feeds.items():
        network.variables[name].d = value
    ys = [network.variables[o] for o in outputs]
    nn.forward_all(ys)
    return [y.d.copy() for y in ys]


def _run_onnx(path, feeds):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("kind", sorted(onnx_cases.CASES))
def test_each_exported_function_runs_in_onnxruntime_with_our_outputs(tmp_path, kind):
    nnp, model = str(tmp_path / "m.nnp"), str(tmp_path / "m.onnx")
    inputs, outputs = _save_case(nnp, kind)
    with zipfile.ZipFile(nnp) as archive:
        assert f'type: "{kind}"' in archive.read("network.nntxt").decode()
    convert_files(_args(export_format="ONNX", batch_size=-1), [nnp], model)
    feeds = dict(zip(inputs, _case_inputs(kind)))
    ours = _run_nnp(nnp, feeds, outputs)
    theirs = _run_onnx(model, feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(b, np.asarray(a, dtype=b.dtype), rtol=1e-5, atol=1e-5)


def test_every_exported_type_has_a_case():
    from nnabla.utils.converter.onnx.exporter import supported_functions
    assert sorted(onnx_cases.CASES) == supported_functions()


def test_a_function_without_export_is_named(tmp_path):
    import nnabla.functions as F

    x = nn.Variable((2, 3))
    path = str(tmp_path / "m.nnp")
    save(path, {"networks": [{"name": "n", "batch_size": 2, "outputs": {"y": F.cumprod(x, 1)},
                              "names": {"x": x}}],
                "executors": [{"name": "e", "network": "n", "data": ["x"], "output": ["y"]}]})
    with pytest.raises(NotImplementedError, match="'CumProd'"):
        convert_files(_args(export_format="ONNX"), [path], str(tmp_path / "m.onnx"))


# Exports whose ONNX graph uses operators the importer does not read, and why.
NOT_ROUND_TRIPPED = {
    "SoftmaxCrossEntropy": "exported with GatherElements, which is not imported",
    "CategoricalCrossEntropy": "exported with GatherElements, which is not imported",
}


def _run_imported(path, feeds, outputs):
    nn.clear_parameters()
    loader = NnpLoader(path)
    network = loader.get_network(loader.get_network_names()[0])
    for name, value in feeds.items():
        network.variables[name].d = value
    ys = [network.variables[o] for o in outputs]
    nn.forward_all(ys)
    return [y.d.copy() for y in ys]


@pytest.mark.parametrize("kind", sorted(set(onnx_cases.CASES) - set(NOT_ROUND_TRIPPED)))
def test_our_exported_models_import_back_with_onnxruntime_s_outputs(tmp_path, kind):
    nnp, model, back = (str(tmp_path / n) for n in ("m.nnp", "m.onnx", "back.nnp"))
    inputs, outputs = _save_case(nnp, kind)
    convert_files(_args(export_format="ONNX", batch_size=-1), [nnp], model)
    convert_files(_args(import_format="ONNX", export_format="NNP"), [model], back)
    feeds = dict(zip(inputs, _case_inputs(kind)))
    for ours, theirs in zip(_run_imported(back, feeds, outputs), _run_onnx(model, feeds)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("build", [onnx_models.resnet_like, onnx_models.mobilenet_like])
def test_resnet_and_mobilenet_style_models_import_with_onnxruntime_s_outputs(tmp_path, build):
    model, back = str(tmp_path / "m.onnx"), str(tmp_path / "m.nnp")
    proto = build()
    onnx.checker.check_model(proto)
    onnx.save(proto, model)
    convert_files(_args(import_format="ONNX", export_format="NNP"), [model], back)
    x = np.random.RandomState(5).randn(2, 3, 16, 16).astype(np.float32)
    output = proto.graph.output[0].name
    ours = _run_imported(back, {"x": x}, [output])[0]
    theirs = _run_onnx(model, {"x": x})[0]
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6)


def test_an_imported_model_converts_on_to_nnb(tmp_path):
    model, nnb = str(tmp_path / "m.onnx"), str(tmp_path / "m.nnb")
    onnx.save(onnx_models.mobilenet_like(batch=1), model)
    convert_files(_args(import_format="ONNX", export_format="NNB"), [model], nnb)
    with open(nnb, "rb") as stream:
        assert stream.read(4) == b"\x02\x00\x00\x00"       # NNB format version 2


def test_an_operator_without_import_is_named(tmp_path):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Hardmax", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    with pytest.raises(NotImplementedError, match="'Hardmax'"):
        convert_files(_args(import_format="ONNX"), [path], str(tmp_path / "m.nnp"))
