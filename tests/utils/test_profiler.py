"""Tests of nnabla.utils.profiler.GraphProfiler and its CSV writer."""
import csv
import io

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.utils.profiler import GraphProfiler, GraphProfilerCsvWriter, convert_time_scale


@pytest.fixture
def loss():
    nn.clear_parameters()
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(4, 6).astype(np.float32))
    t = nn.Variable.from_numpy_array(np.array([[0], [1], [2], [1]], dtype=np.int32))
    y = PF.affine(F.relu(PF.affine(x, 5, name="fc1")), 3, name="fc2")
    yield F.mean(F.softmax_cross_entropy(y, t))
    nn.clear_parameters()


def test_profiler_measures_every_function_and_training(loss):
    solver = S.Sgd()
    solver.set_parameters(nn.get_parameters())
    profiler = GraphProfiler(loss, device_id=0, ext_name="cpu", solver=solver, n_run=3,
                             time_scale="u")
    profiler.run()
    forward = profiler.result["forward"]
    assert [s.function_name for s in forward] == ["Affine", "ReLU", "Affine",
                                                  "SoftmaxCrossEntropy", "Mean"]
    assert [s.parameter_scope for s in forward][:3] == ["fc1/affine", None, "fc2/affine"]
    assert forward[0].inputs_shape == [(4, 6), (6, 5), (5,)]
    assert all(s.n_run == 3 and float(s.mean_time) >= 0 for s in forward)
    assert profiler.result["n_run_training"] == 3


def test_csv_writer_writes_header_rows_and_totals(loss):
    profiler = GraphProfiler(loss, device_id="0", ext_name="cpu", n_run=2)
    profiler.run()
    out = io.StringIO()
    GraphProfilerCsvWriter(profiler, file=out).write()
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[:4] == [["num. of run", "2"], ["device id", "0"], ["ext name", "cpu"],
                        ["time scale", "m"]]
    assert rows[4] == ["nnabla version", nn.__version__]
    assert rows[6][:4] == ["parameter_scope", "function_name", "inputs_shape", "args_info"]
    assert rows[7][:2] == ["fc1/affine", "Affine"] and rows[7][3] == "base_axis: 1"
    assert ["forward_all_n_run", "2"] in rows and ["backward_all_n_run", "2"] in rows
    assert not any(r and r[0].startswith("training") for r in rows)


def test_time_scales_and_bad_arguments():
    assert convert_time_scale(2e-3, "u") == pytest.approx(2000.0)
    with pytest.raises(NotImplementedError):
        convert_time_scale(1.0, "s")
    with pytest.raises(AssertionError, match="n_run"):
        GraphProfiler(nn.Variable((1,)), device_id="0", ext_name="cpu", n_run=0)
