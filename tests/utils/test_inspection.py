"""Tests of nnabla.utils.inspection: pprint, NanInfTracer, TimeProfiler."""
import csv
import re

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla.utils.inspection import (CpuTimerCallback, FunctionHookCallbackBase, NanInfTracer,
                                     TimeProfiler, pprint)


@pytest.fixture
def mlp():
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(4, 3).astype(np.float32))
    with nn.parameter_scope("fc1"):
        h = F.relu(PF.affine(x, 5))
    with nn.parameter_scope("fc2"):
        y = PF.affine(h, 2)
    yield F.mean(y)
    nn.clear_parameters()


def test_pprint_lists_functions_in_order_with_scopes_depths_and_shapes(mlp, capsys):
    printer = pprint(mlp, hidden=True, printer=True)
    out = capsys.readouterr().out
    heads = [line for line in out.splitlines() if not line.startswith("\t")]
    assert heads == ["fc1/affine/Affine(Affine)", "ReLU(ReLU)", "fc2/affine/Affine(Affine)",
                     "Mean(Mean)"]
    assert re.findall(r"Depth = (\d+)", out) == ["0", "1", "2", "3"]
    assert "\tInputs: [(4, 3), (3, 5), (5,)]" in out
    assert [f["name"] for f in printer.functions] == heads


def test_pprint_summary_prints_statistics_of_the_data(mlp, capsys):
    pprint(mlp, forward=True, backward=True, summary=True)
    out = capsys.readouterr().out
    x = mlp.parent.inputs[0]
    assert f"\t\tMax:  {[np.max(x.d)]}" in out
    assert pprint(mlp) is None


def test_nan_inf_tracer_names_the_first_function_with_nan(capsys):
    x = nn.Variable.from_numpy_array(np.array([-1.0, 4.0], np.float32))
    y = F.exp(F.log(x))   # log(-1) = nan
    tracer = NanInfTracer()
    with pytest.raises(ValueError, match=r"The 0th output of the function 'Log' \(rank: 0\)"):
        with tracer.trace():
            y.forward(function_post_hook=tracer.forward_post_hook)
    assert "<-- ERROR" in capsys.readouterr().out


def test_nan_inf_tracer_checks_gradients_in_backward():
    x = nn.Variable.from_numpy_array(np.array([0.0, 4.0], np.float32), need_grad=True)
    y = F.sum(F.pow_scalar(x, 0.5))   # d sqrt(x)/dx = inf at 0
    tracer = NanInfTracer(trace_nan=False, need_details=False)
    y.forward(function_post_hook=tracer.forward_post_hook)
    tracer.check()
    y.backward(function_post_hook=tracer.backward_post_hook)
    with pytest.raises(ValueError, match="'PowScalar'"):
        tracer.check()


def test_nan_inf_tracer_without_targets_gives_no_hooks():
    tracer = NanInfTracer(trace_nan=False, trace_inf=False)
    assert tracer.forward_post_hook is None and tracer.pre_hook is None
    with pytest.raises(NotImplementedError):
        tracer.post_hook


def test_hook_base_class_requires_hooks():
    with pytest.raises(NotImplementedError):
        FunctionHookCallbackBase().pre_hook


def test_time_profiler_times_each_function_and_each_scope(mlp, tmp_path, capsys):
    tp = TimeProfiler("cpu", device_id="0")
    for _ in range(3):
        with tp.scope("forward"):
            mlp.forward(function_pre_hook=tp.pre_hook, function_post_hook=tp.post_hook)
        with tp.scope("backward"):
            mlp.backward(function_pre_hook=tp.pre_hook, function_post_hook=tp.post_hook)
        tp.calc_elapsed_time(["forward", "backward", "summary"])
    results = tp.get_all_results()
    assert sorted(results) == ["backward", "forward", "summary"]
    assert [f.name for f in results["forward"]] == ["Affine", "ReLU", "Affine", "Mean"]
    assert all(len(times) == 3 and min(times) >= 0 for times in results["forward"].values())
    assert tp.average(1)["summary"]["forward"]["num"] == 2
    tp.to_csv(out_dir=str(tmp_path))
    with open(tmp_path / "profile_summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [row["scope"] for row in rows] == ["forward", "backward"]
    assert {row["num"] for row in rows} == {"2"}
    with open(tmp_path / "profile_detail.csv") as f:
        detail = list(csv.DictReader(f))
    assert len(detail) == 4 and "time_forward" in detail[0] and "time_backward" in detail[0]
    tp()
    assert "### forward ###" in capsys.readouterr().out


def test_time_profiler_refuses_unknown_extensions():
    with pytest.raises(NotImplementedError, match="toy"):
        TimeProfiler("toy", device_id="0")


def test_cpu_timer_measures_wall_clock(monkeypatch):
    clock = iter([10.0, 10.25])
    monkeypatch.setattr(CpuTimerCallback, "timer", staticmethod(lambda: next(clock)))
    timer = CpuTimerCallback("cpu", "0")
    timer.pre_hook("k")
    timer.post_hook("k")
    timer.calc_elapsed_time()
    assert timer.average() == {"k": {"time": 250.0, "num": 1, "scale": "ms"}}
    with pytest.raises(ValueError, match="pre_hook"):
        timer.post_hook("other")
