"""nnabla.mlflow_save_load_model against a local MLflow (a sqlite tracking store and artifact
folders in temporary directories, no network): the files it writes and logs, what load_model
gives back, the pyfunc model's predictions against numpy, and its errors."""
import importlib
import importlib.metadata
import os
import sys

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla._mlflow_pyfunc import _NnablaModelWrapper
from nnabla.utils.save import save

# no usage reports from MLflow (the tests run offline); set before MLflow is imported
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
try:
    import mlflow
except ImportError:
    mlflow = None

# MLflow's own import-time notices about its type hints (not about this module)
pytestmark = pytest.mark.filterwarnings("ignore:.*type hint is inferred as AnyType:UserWarning")

needs_mlflow = pytest.mark.skipif(
    mlflow is None, reason="MLflow is not installed (pip install 'nnabla[mlflow]')")


def test_import_without_mlflow_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlflow", None)  # None: import mlflow raises
    monkeypatch.delitem(sys.modules, "nnabla.mlflow_save_load_model", raising=False)
    with pytest.raises(ModuleNotFoundError, match=r"nnabla\[mlflow\]") as raised:
        importlib.import_module("nnabla.mlflow_save_load_model")
    assert raised.value.name == "mlflow"


@pytest.fixture
def flavor():
    return importlib.import_module("nnabla.mlflow_save_load_model")


@pytest.fixture(scope="module")
def tracking_store(tmp_path_factory):
    """One sqlite tracking store for the module (creating one takes seconds)."""
    previous = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}")
    yield
    mlflow.set_tracking_uri(previous)


@pytest.fixture
def tracking(tracking_store, tmp_path, monkeypatch, request):
    """A new experiment with its artifacts under tmp_path; restores mlflow.start_run."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mlflow, "start_run", mlflow.start_run)  # unique_run_name patches it
    experiment_id = mlflow.create_experiment(
        request.node.name, artifact_location=(tmp_path / "artifacts").as_uri())
    mlflow.set_experiment(experiment_id=experiment_id)
    yield experiment_id
    while mlflow.active_run():
        mlflow.end_run()


@pytest.fixture
def files(tmp_path):
    """A folder 'model' with params.h5, net.nnp (y = x W + b, runtime executor), two
    checkpoints; the weights W (3, 2) and b (2,) as numpy arrays."""
    rng = np.random.RandomState(7)
    weight, bias = rng.randn(3, 2).astype(np.float32), rng.randn(2).astype(np.float32)
    folder = tmp_path / "model"
    folder.mkdir()
    with nn.parameter_scope("", {}):
        x = nn.Variable((4, 3))
        y = PF.affine(x, 2, name="fc")
        nn.get_parameters()["fc/affine/W"].d = weight
        nn.get_parameters()["fc/affine/b"].d = bias
        nn.save_parameters(str(folder / "params.h5"))
        save(str(folder / "net.nnp"), {
            "networks": [{"name": "net", "batch_size": 4, "outputs": {"y": y},
                          "names": {"x": x}}],
            "executors": [{"name": "runtime", "network": "net", "data": ["x"],
                           "output": ["y"]}]})
    for name, text in (("checkpoint_1.json", "{}"), ("checkpoint_0.json", "[]")):
        (folder / name).write_text(text)
    return {"folder": folder, "weight": weight, "bias": bias,
            "checkpoints": [str(folder / "checkpoint_1.json"), str(folder / "checkpoint_0.json")]}


def _log(flavor, files, **kwargs):
    with mlflow.start_run() as run:
        info = flavor.log_model("params.h5", "model", **kwargs)
    return info, run.info.run_id


@needs_mlflow
def test_saved_directory_has_nnablas_flavor_layout(flavor, files, tmp_path):
    folder = files["folder"]
    config = tmp_path / "config.txt"
    config.write_text("batch_size: 4")
    flavor.save_model(str(folder / "params.h5"), str(tmp_path / "saved"),
                      nnp=[str(folder / "net.nnp")], checkpoint=files["checkpoints"],
                      config_file=str(config))
    saved = tmp_path / "saved"
    conf = mlflow.models.Model.load(str(saved / "MLmodel")).flavors
    assert conf["nnabla"]["model_data"] == "model"
    assert conf["nnabla"]["nnabla_version"] == nn.__version__
    assert conf["nnabla"]["nnp_files"] == [{"path": "nnp_files/net.nnp"}]
    assert conf["nnabla"]["checkpoint_files"] == [
        {"path": "checkpoint_files/checkpoint_1.json"},
        {"path": "checkpoint_files/checkpoint_0.json"}]
    assert conf["python_function"]["loader_module"] == "nnabla.mlflow_save_load_model"
    assert (saved / "model" / "params.h5").read_bytes() == (folder / "params.h5").read_bytes()
    assert (saved / "nnp_files" / "net.nnp").read_bytes() == (folder / "net.nnp").read_bytes()
    assert (saved / "config.txt").read_text() == "batch_size: 4"
    requirements = (saved / "requirements.txt").read_text().splitlines()
    assert f"nnabla=={importlib.metadata.version('nnabla')}" in requirements
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]  # no temporary left


@needs_mlflow
def test_log_model_logs_to_the_run_and_load_model_gives_each_kind(flavor, files, tracking):
    folder = files["folder"]
    os.chdir(folder.parent)
    info, run_id = _log(flavor, files, nnp=[str(folder / "net.nnp")],
                        checkpoint=files["checkpoints"])
    assert info.model_uri == f"runs:/{run_id}/model"
    params = flavor.load_model(info.model_uri)
    assert params != str(folder / "params.h5")
    with open(params, "rb") as f:
        assert f.read() == (folder / "params.h5").read_bytes()
    assert os.path.isfile(os.path.join(flavor.load_model(info.model_uri, model="MLmodel"),
                                       "MLmodel"))
    checkpoints = flavor.load_model(info.model_uri, model="checkpoint")
    assert [os.path.basename(p) for p in checkpoints] == ["checkpoint_1.json",
                                                          "checkpoint_0.json"]
    assert open(checkpoints[0]).read() == "{}"
    [nnp] = flavor.load_model(info.model_uri, model="nnp")
    assert open(nnp, "rb").read() == (folder / "net.nnp").read_bytes()


@needs_mlflow
def test_load_model_refuses_unknown_kinds_and_missing_files(flavor, files, tracking):
    os.chdir(files["folder"].parent)
    info, _ = _log(flavor, files)
    with pytest.raises(ValueError, match="argument 'model' must be one of"):
        flavor.load_model(info.model_uri, model="weights")
    with pytest.raises(TypeError, match="only 'model'"):
        flavor.load_model(info.model_uri, modle="nnp")
    with pytest.raises(FileNotFoundError, match="without nnp files"):
        flavor.load_model(info.model_uri, model="nnp")


@needs_mlflow
def test_pyfunc_predict_is_x_times_w_plus_b(flavor, files, tracking):
    import pandas as pd
    os.chdir(files["folder"].parent)
    info, _ = _log(flavor, files, nnp=[str(files["folder"] / "net.nnp")])
    before = {k: v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
    model = mlflow.pyfunc.load_model(info.model_uri)
    x = np.random.RandomState(0).randn(5, 3).astype(np.float32)  # batch 5, saved with 4
    expected = x @ files["weight"] + files["bias"]
    np.testing.assert_allclose(model.predict(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict({"x": x[:2]}), expected[:2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict(pd.DataFrame(x)), expected, rtol=1e-5, atol=1e-6)
    assert model.predict(None) is None  # nnabla 1.39's pyfunc model returns None
    after = {k: v.d for k, v in nn.get_parameters(grad_only=False).items()}
    assert before.keys() == after.keys()  # predicting leaves the caller's parameters alone


@needs_mlflow
def test_pyfunc_predict_names_bad_inputs(flavor, files, tracking):
    os.chdir(files["folder"].parent)
    info, _ = _log(flavor, files, nnp=[str(files["folder"] / "net.nnp")])
    model = flavor._load_pyfunc(os.path.join(
        flavor.load_model(info.model_uri, model="MLmodel"), "model"))
    with pytest.raises(ValueError, match=r"missing \['x'\], unknown \['z'\]"):
        model.predict({"z": np.zeros((2, 3))})
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 4\); expected \(2, 3\)"):
        model.predict(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="numeric array"):
        model.predict(np.array(["a", "b"]))
    info, _ = _log(flavor, files)
    without_network = mlflow.pyfunc.load_model(info.model_uri)
    with pytest.raises(ValueError, match="saved without a network"):
        without_network.predict(np.zeros((2, 3), np.float32))


def test_network_without_executor_predicts_every_output_by_name(files, tmp_path):
    # no executor: the network's outputs are its leaves; the pyfunc model needs no MLflow
    with nn.parameter_scope("", {}):
        x = nn.Variable((4, 3))
        y = PF.affine(x, 2, name="fc")
        nn.get_parameters()["fc/affine/W"].d = files["weight"]
        nn.get_parameters()["fc/affine/b"].d = files["bias"]
        save(str(tmp_path / "two.nnp"), {"networks": [
            {"name": "net", "batch_size": 4, "outputs": {"y": y, "r": F.relu(x)},
             "names": {"x": x}}]})
    model = _NnablaModelWrapper(str(files["folder"] / "params.h5"), [str(tmp_path / "two.nnp")])
    x = np.random.RandomState(1).randn(3, 3).astype(np.float32)
    predicted = model.predict({"x": x})
    assert sorted(predicted) == ["r", "y"]
    np.testing.assert_allclose(predicted["y"], x @ files["weight"] + files["bias"],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(predicted["r"], np.maximum(x, 0))
    with pytest.raises(ValueError, match="argument 'params' is not supported"):
        model.predict(x, params={"batch_size": 2})


@needs_mlflow
def test_input_example_gives_the_signature_with_outputs(flavor, files, tmp_path):
    folder = files["folder"]
    example = np.ones((2, 3), np.float32)
    flavor.save_model(str(folder / "params.h5"), str(tmp_path / "saved"),
                      nnp=[str(folder / "net.nnp")], input_example=example)
    signature = mlflow.models.Model.load(str(tmp_path / "saved" / "MLmodel")).signature
    assert signature.inputs.inputs[0].shape == (-1, 3)
    assert signature.outputs.inputs[0].shape == (-1, 2)


@needs_mlflow
def test_a_failed_save_leaves_no_directory(flavor, files, tmp_path):
    folder = files["folder"]
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 4\)"):
        flavor.save_model(str(folder / "params.h5"), str(tmp_path / "saved"),
                          nnp=[str(folder / "net.nnp")], input_example=np.ones((2, 4)))
    assert sorted(os.listdir(tmp_path)) == ["model"]


@needs_mlflow
def test_bad_arguments_raise_before_anything_is_written(flavor, files, tmp_path):
    params, target = str(files["folder"] / "params.h5"), tmp_path / "saved"
    with pytest.raises(TypeError, match="argument 'nnp' must be a list"):
        flavor.save_model(params, str(target), nnp=str(files["folder"] / "net.nnp"))
    with pytest.raises(ValueError, match="several files named"):
        flavor.save_model(params, str(target), checkpoint=[params, params])
    with pytest.raises(FileNotFoundError, match="argument 'nnabla_model_name'"):
        flavor.save_model(str(tmp_path / "missing.h5"), str(target))
    with pytest.raises(ValueError, match="'config_file' is named 'MLmodel'"):
        (tmp_path / "MLmodel").write_text("")
        flavor.save_model(params, str(target), config_file=str(tmp_path / "MLmodel"))
    with pytest.raises(ValueError, match="must be relative"):
        flavor.log_model("params.h5", str(files["folder"]))
    assert not target.exists()
    assert not [p for p in os.listdir(tmp_path) if ".tmp-" in p]


@needs_mlflow
def test_runs_are_found_by_name_and_names_made_unique(flavor, tracking):
    with mlflow.start_run(run_name="train") as first:
        pass
    with mlflow.start_run(run_name="train") as second:
        pass
    assert flavor.get_runid_by_name("train") == second.info.run_id  # the newest
    assert first.info.run_id != second.info.run_id
    assert flavor.get_runid_by_name("absent") is None
    with pytest.raises(ValueError, match="no experiment named 'nope'"):
        flavor.get_runid_by_name("train", experiment_name="nope")
    flavor.unique_run_name()
    flavor.unique_run_name()  # once is enough; a second call changes nothing
    names = []
    for _ in range(2):
        with mlflow.start_run(run_name="train") as run:
            names.append(run.info.run_name)
    assert names == ["train-1", "train-2"]
    with mlflow.start_run(run_name="it's") as quoted:  # cannot be quoted in a filter
        pass
    assert flavor.get_runid_by_name("it's") == quoted.info.run_id
