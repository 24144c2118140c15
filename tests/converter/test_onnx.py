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
    shapes, _, (low, high) = onnx_cases.CASES[kind]
    feeds = dict(zip(inputs, onnx_cases.inputs(shapes, low, high)))
    ours = _run_nnp(nnp, feeds, outputs)
    theirs = _run_onnx(model, feeds)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_every_exported_type_has_a_case():
    from nnabla.utils.converter.onnx.exporter import supported_functions
    assert sorted(onnx_cases.CASES) == supported_functions()


def test_a_function_without_export_is_named(tmp_path):
    import nnabla.functions as F

    x = nn.Variable((2, 3))
    path = str(tmp_path / "m.nnp")
    save(path, {"networks": [{"name": "n", "batch_size": 2, "outputs": {"y": F.cumsum(x, 1)},
                              "names": {"x": x}}],
                "executors": [{"name": "e", "network": "n", "data": ["x"], "output": ["y"]}]})
    with pytest.raises(NotImplementedError, match="'CumSum'"):
        convert_files(_args(export_format="ONNX"), [path], str(tmp_path / "m.onnx"))
