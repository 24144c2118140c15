"""nnabla.autolog against a recording stand-in for MLflow: which metrics and artifacts the
monitors log, with which steps, and that stop_autolog restores the plain monitors."""
import os
import sys
import types

import numpy as np
import pytest

import nnabla as nn
from nnabla.monitor import Monitor, MonitorImage, MonitorImageTile, MonitorSeries
from nnabla.monitor import MonitorTimeElapsed

pytest.importorskip("PIL", reason="image monitors write PNG files with pillow")


@pytest.fixture
def mlflow(monkeypatch):
    calls = []
    fake = types.ModuleType("mlflow")
    fake.log_metric = lambda name, value, step=None: calls.append(("metric", name, value, step))
    fake.log_artifact = lambda path, uri=None: calls.append(("artifact", path, uri))
    run = types.SimpleNamespace(info=types.SimpleNamespace(run_id="r1"))
    fake.active_run = lambda: run
    fake.calls = calls
    monkeypatch.setitem(sys.modules, "mlflow", fake)
    import nnabla.autolog as autolog
    yield fake
    autolog.stop_autolog()


def test_series_and_time_metrics_are_logged_at_each_flush(mlflow, tmp_path):
    import nnabla.autolog as autolog
    plain = (MonitorSeries.add, MonitorTimeElapsed.add, MonitorImage.add,
             MonitorImageTile.add, nn.save_parameters)
    autolog.autolog()
    monitor = Monitor(str(tmp_path))
    series = MonitorSeries("loss", monitor, interval=2, verbose=False)
    timer = MonitorTimeElapsed("time", monitor, interval=3, verbose=False)
    for i in range(6):
        series.add(i, float(i))
        timer.add(i)
    metrics = [c for c in mlflow.calls if c[0] == "metric"]
    # flushes at 1 (mean of 0, 1), 3 (2, 3), 5 (4, 5); the timer at 2 and 5
    assert [(n, v, s) for _, n, v, s in metrics if n == "loss"] == [
        ("loss", 0.5, 1), ("loss", 2.5, 3), ("loss", 4.5, 5)]
    assert [s for _, n, _, s in metrics if n == "time"] == [2, 5]
    assert all(v >= 0 for _, n, v, _ in metrics if n == "time")
    autolog.stop_autolog()
    assert (MonitorSeries.add, MonitorTimeElapsed.add, MonitorImage.add,
            MonitorImageTile.add, nn.save_parameters) == plain
    series.add(6, 1.0)
    series.add(7, 1.0)
    assert len([c for c in mlflow.calls if c[0] == "metric"]) == len(metrics)


def test_images_and_parameters_are_logged_as_artifacts_of_the_run(mlflow, tmp_path):
    import nnabla.autolog as autolog
    autolog.autolog(with_save_parameters=True)
    monitor = Monitor(str(tmp_path))
    images = MonitorImage("img", monitor, interval=2, num_images=2, verbose=False)
    tiles = MonitorImageTile("tile", monitor, interval=2, num_images=4, verbose=False)
    batch = np.random.RandomState(0).rand(5, 3, 4, 4)
    for i in range(4):
        images.add(i, batch)
        tiles.add(i, batch)
    artifacts = [(os.path.basename(p), uri) for kind, p, uri in mlflow.calls
                 if kind == "artifact"]
    assert artifacts == [("000001-000.png", "runs_r1/img"), ("000001-001.png", "runs_r1/img"),
                         ("000001.png", "runs_r1/tile"),
                         ("000003-000.png", "runs_r1/img"), ("000003-001.png", "runs_r1/img"),
                         ("000003.png", "runs_r1/tile")]
    nn.clear_parameters()
    nn.parameter.get_parameter_or_create("w", (2,))
    path = str(tmp_path / "params.h5")
    nn.save_parameters(path)
    assert mlflow.calls[-1] == ("artifact", path, "runs_r1/parameters")
    nn.clear_parameters()


def test_artifacts_need_an_active_run(mlflow, tmp_path):
    import nnabla.autolog as autolog
    mlflow.active_run = lambda: None
    autolog.autolog()
    images = MonitorImage("img", Monitor(str(tmp_path)), interval=1, verbose=False)
    with pytest.raises(RuntimeError, match="nnabla.autolog: no active MLflow run"):
        images.add(0, np.ones((1, 3, 2, 2)))


def test_autolog_without_mlflow_says_how_to_install_it(monkeypatch):
    import nnabla.autolog as autolog
    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(ImportError, match="pip install mlflow"):
        autolog.autolog()
    assert MonitorSeries.add.__module__ == "nnabla.monitor"
