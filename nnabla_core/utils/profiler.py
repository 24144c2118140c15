"""Time every function of a graph, and the whole graph (``nnabla.utils.profiler``).

:class:`GraphProfiler` runs each function's forward and backward alone ``n_run`` times
(or until ``max_measure_execution_time`` seconds), then the whole graph's forward and
backward and, with a solver, a training step; :class:`GraphProfilerCsvWriter` writes the
result as nnabla's CSV report.
"""
from __future__ import annotations

import csv
import os
import sys
import time
from collections import namedtuple
from functools import partial

import nnabla as nn
from nnabla.ext_utils import import_extension_module
from nnabla.utils.inspection.profile import synchronizer

ProfileStat = namedtuple("ProfileStat", ["parameter_scope", "inputs_shape", "args_info",
                                         "function_name", "mean_time", "n_run"])

_SCALES = {"m": 1e3, "u": 1e6, "n": 1e9}


def convert_time_scale(sec, format="m"):
    """``sec`` in milli (``'m'``), micro (``'u'``) or nano (``'n'``) seconds.

    Raises:
        NotImplementedError: For another ``format``.

    Example:
        >>> convert_time_scale(0.5, "m")
        500.0
    """
    if format not in _SCALES:
        raise NotImplementedError(f"convert_time_scale: format must be one of "
                                  f"{list(_SCALES)}; given {format!r}")
    return sec * _SCALES[format]


def _zero_variables(variables):
    for v in variables:
        if v.parent is None:
            continue
        v.data.zero()
        v.grad.zero()


class GraphProfilerCsvWriter:
    """Writes a :class:`GraphProfiler`'s result as CSV (header block, one row per
    function with forward and backward times, then the whole-graph times).

    Args:
        gb (GraphProfiler): A profiler that has run.
        file (file object): Output (standard output by default); the header is written
            at construction.
    """

    def __init__(self, gb, file=sys.stdout):
        self.file = file
        self.gb = gb
        self.fields = ["parameter_scope", "function_name", "inputs_shape", "args_info",
                       "forward", "backward", "forward_n_run", "backward_n_run"]
        self.write_header()

    def write_header(self):
        """Write the run settings and the column names."""
        writer = csv.writer(self.file)
        writer.writerow(["num. of run", self.gb.n_run])
        writer.writerow(["device id", self.gb.device_id])
        writer.writerow(["ext name", self.gb.ext_name])
        writer.writerow(["time scale", self.gb.time_scale])
        writer.writerow(["nnabla version", nn.__version__])
        writer.writerow([])
        writer.writerow(self.fields)

    def check_same(self, f, b):
        """bool: The forward and backward rows describe the same function."""
        return all(f[field] == b[field] for field in self.fields[:4])

    def write(self):
        """Write one row per function and the whole-graph results.

        Raises:
            AssertionError: The forward and backward results do not list the same
                functions.
        """
        writer = csv.writer(self.file)
        result = self.gb.result
        for forward, backward in zip(result["forward"], result["backward"]):
            f, b = forward._asdict(), backward._asdict()
            if not self.check_same(f, b):
                raise AssertionError(f"GraphProfilerCsvWriter: forward row {f} and backward "
                                     f"row {b} describe different functions")
            args_info = ", ".join(f"{k}: {v}" for k, v in f["args_info"])
            writer.writerow([f["parameter_scope"], f["function_name"], f["inputs_shape"],
                             args_info, f["mean_time"], b["mean_time"], f["n_run"],
                             b["n_run"]])
        writer.writerow([])
        writer.writerow(["forward all", result["forward_all"]])
        writer.writerow(["forward_all_n_run", result["n_run_forward_all"]])
        writer.writerow([])
        writer.writerow(["backward all", result["backward_all"]])
        writer.writerow(["backward_all_n_run", result["n_run_backward_all"]])
        if {"training", "n_run_training"} <= set(result):
            writer.writerow([])
            writer.writerow(["training(forward + backward + update)", result["training"]])
            writer.writerow(["training_n_run", result["n_run_training"]])


class GraphProfiler:
    """Measures the time of each function of a graph and of the whole graph.

    Args:
        graph (nnabla.Variable): Last variable of the graph.
        device_id (str): Device id.
        ext_name (str): Extension (``'cpu'``, ``'cudnn'``...), synchronised after each run.
        solver (nnabla.solver.Solver or None): With a solver, a training step (forward,
            backward, update) is timed too.
        n_run (int): Runs per measurement.
        max_measure_execution_time (float): Stop a measurement after this many seconds
            (at least one run is made).
        time_scale (str): ``'m'``, ``'u'`` or ``'n'`` (milli, micro, nano seconds).
        backward_accum (bool): ``accum`` flag of each function's backward.

    Raises:
        AssertionError: ``n_run < 1`` (as nnabla).

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> y = F.relu(nn.Variable.from_numpy_array(np.ones((2, 3)), need_grad=True))
        >>> profiler = GraphProfiler(y, device_id="0", ext_name="cpu", n_run=2)
        >>> profiler.run()
        >>> [stat.function_name for stat in profiler.result["forward"]]
        ['ReLU']
    """

    def __init__(self, graph, device_id, ext_name, solver=None, n_run=100,
                 max_measure_execution_time=1, time_scale="m", backward_accum=False):
        self.graph = graph
        self.solver = solver
        self.n_run = n_run
        self.device_id = str(device_id)
        self.ext_name = ext_name
        self.ext_module = import_extension_module(self.ext_name)
        self._synchronize = synchronizer(self.ext_module)
        self.max_measure_execution_time = max_measure_execution_time
        self.time_scale = time_scale
        self.result = dict()
        self.name2val = {v: k for k, v in nn.get_parameters().items()}
        self.backward_accum = backward_accum
        if self.n_run < 1:
            raise AssertionError(f"GraphProfiler: n_run must be at least 1; given {n_run}")

    def _measure_execution_time(self, execution, *execution_args):
        execution(*execution_args)  # warm-up
        self._synchronize(device_id=self.device_id)
        total, count = 0.0, 0
        begin = time.time()
        for _ in range(self.n_run):
            start = time.time()
            execution(*execution_args)
            self._synchronize(device_id=self.device_id)
            stop = time.time()
            total += stop - start
            count += 1
            if stop - begin > self.max_measure_execution_time:
                break
        mean_time = convert_time_scale(total / count, format=self.time_scale)
        return "{:.8}".format(mean_time), count

    def _time_profiling(self, f, target_process):
        # zeroed so that functions reading labels (softmax cross entropy) see valid ones
        _zero_variables(f.inputs)
        _zero_variables(f.outputs)
        if target_process == "forward":
            mean_time, count = self._measure_execution_time(f.forward, f.inputs, f.outputs)
        elif target_process == "backward":
            accum = [self.backward_accum] * len(f.inputs)
            mean_time, count = self._measure_execution_time(f.backward, f.inputs, f.outputs,
                                                            accum)
        else:
            raise NotImplementedError(f"GraphProfiler: target_process must be 'forward' or "
                                      f"'backward'; given {target_process!r}")
        _zero_variables(f.inputs)
        _zero_variables(f.outputs)
        parameter_scope = None
        if len(f.inputs) > 1 and f.inputs[1] in self.name2val:
            parameter_scope = os.path.dirname(self.name2val[f.inputs[1]])
        self.result[target_process].append(ProfileStat(
            parameter_scope=parameter_scope, inputs_shape=[x.shape for x in f.inputs],
            args_info=f.info.args.items(), function_name=f.name, mean_time=mean_time,
            n_run=count))

    def time_profiling_forward(self):
        """Time each function's forward."""
        self.result["forward"] = []
        self.graph.visit(partial(self._time_profiling, target_process="forward"))

    def time_profiling_backward(self):
        """Time each function's backward."""
        self.result["backward"] = []
        self.graph.visit(partial(self._time_profiling, target_process="backward"))

    def training_function(self):
        """One training step: forward, zero_grad, backward, update."""
        self.graph.forward(clear_no_need_grad=True)
        self.solver.zero_grad()
        self.graph.backward(clear_buffer=True)
        self.solver.update()

    def time_profiling_whole_graph(self):
        """Time the whole graph's forward, backward and (with a solver) training step."""
        self.result["forward_all"], self.result["n_run_forward_all"] = \
            self._measure_execution_time(self.graph.forward)
        self.result["backward_all"], self.result["n_run_backward_all"] = \
            self._measure_execution_time(self.graph.backward)
        if self.solver is not None:
            self.result["training"], self.result["n_run_training"] = \
                self._measure_execution_time(self.training_function)

    def run(self):
        """Run every measurement (functions' forward and backward, whole graph, training)."""
        self.time_profiling_forward()
        self.time_profiling_backward()
        self.time_profiling_whole_graph()

    def get_result(self):
        """dict: The measurements (``forward``, ``backward``: lists of ProfileStat;
        ``forward_all``, ``backward_all``, ``training`` and their ``n_run_*``)."""
        return self.result

    def print_result(self):
        """Print the measurements."""
        print(f"time scale: {self.time_scale}")
        print("-----------------forward--------------------")
        for stat in self.result["forward"]:
            print(stat)
        print()
        print("-----------------backward--------------------")
        for stat in self.result["backward"]:
            print(stat)
        print()
        print(f"all forward: {self.result['forward_all']}, "
              f"all backward: {self.result['backward_all']}")
