"""Interop with nnabla 1.39: its .nnp/.nntxt/.protobuf files (tests/data/nnp, recorded by
tools/record_nnp_reference.py) load here and give its outputs; files written here load in
nnabla 1.39 with the same outputs (run only when NNABLA_REFERENCE_PYTHON is set)."""
import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import nnabla as nn
from nnabla.utils.load import load
from nnabla.utils.nnp_graph import NnpLoader
from nnabla.utils.save import save

DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "nnp"
TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "record_nnp_reference.py"
MODELS = ["cnn_bn", "lstm", "mlp", "resnet"]
FORMATS = [".nnp", ".nntxt", ".protobuf"]


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _batch_axis(model):
    return 1 if model == "lstm" else 0


@pytest.mark.parametrize("ext", FORMATS)
@pytest.mark.parametrize("model", MODELS)
def test_files_written_by_nnabla_give_its_outputs(model, ext):
    arrays = np.load(DATA / f"{model}_io.npz")
    net = NnpLoader(str(DATA / f"{model}{ext}")).get_network(
        "net", batch_size=arrays["x"].shape[_batch_axis(model)])
    net.inputs["x"].d = arrays["x"]
    net.outputs["y"].forward()
    np.testing.assert_allclose(net.outputs["y"].d, arrays["y"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("model", ["cnn_bn", "mlp", "resnet"])
def test_nnabla_files_run_at_another_batch_size_through_load(model):
    arrays = np.load(DATA / f"{model}_io.npz")
    info = load(str(DATA / f"{model}.nnp"), batch_size=3)
    network = info.executors["runtime"].network
    network.variables["x"].variable_instance.d = arrays["x_b3"]
    y = network.variables["y"].variable_instance
    y.forward()
    np.testing.assert_allclose(y.d, arrays["y_b3"], rtol=1e-5, atol=1e-6)


def _write_our_files(folder):
    import test_nnp_roundtrip as R

    for model in MODELS:
        nn.clear_parameters()
        rng = np.random.RandomState(3)
        x, y = R.NETWORKS[model]()
        R._randomize_parameters(rng)
        x.d = rng.randn(*x.shape)
        y.forward()
        np.savez(folder / f"{model}_io.npz", x=x.d, y=y.d)
        for ext in FORMATS:
            save(str(folder / f"{model}{ext}"),
                 {"networks": [{"name": "net", "batch_size": x.shape[_batch_axis(model)],
                                "outputs": {"y": y}, "names": {"x": x}}]},
                 include_params=True, variable_batch_size=model != "lstm")


def test_files_written_here_load_in_nnabla_with_the_same_outputs(tmp_path):
    reference = os.environ.get("NNABLA_REFERENCE_PYTHON")
    if not reference:
        pytest.skip("NNABLA_REFERENCE_PYTHON is not set: no nnabla 1.39 to load our files")
    _write_our_files(tmp_path)
    done = subprocess.run([reference, str(TOOL), "--check", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    differences = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(differences) == sorted(f"{m}{e}" for m in MODELS for e in FORMATS)
    assert max(differences.values()) < 1e-5, differences
