"""``TimeProfiler``: wall-clock time of each function, per named scope."""
from __future__ import annotations

import csv
import os
import time
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from nnabla.array_family import HOST_FAMILY
from nnabla.ext_utils import import_extension_module

from .base import FunctionHookCallbackBase


def synchronizer(ext_module):
    """``synchronize(device_id=...)`` of an extension module (``device_synchronize`` for a
    module that has only that)."""
    synchronize = getattr(ext_module, "synchronize", None)
    if synchronize is not None:
        return synchronize
    device_synchronize = getattr(ext_module, "device_synchronize", None)
    if device_synchronize is None:
        return lambda **kwargs: None
    return lambda device_id="0", **kwargs: device_synchronize(device_id)


class CpuTimerCallback(FunctionHookCallbackBase):
    """Host wall-clock timer of hooked calls, keyed by the object passed to the hooks.

    Args:
        ext_name (str): Extension whose device is synchronised before a time is taken.
        device_id (str): Device id.

    Attributes:
        results (OrderedDict): key -> list of elapsed seconds, one per
            :meth:`calc_elapsed_time`.
    """

    def __init__(self, ext_name, device_id):
        super().__init__()
        self.results = OrderedDict()
        self.device_id = str(device_id)
        self.ext_module = import_extension_module(ext_name)
        self._synchronize = synchronizer(self.ext_module)
        self.key_to_times = OrderedDict()

    @property
    def pre_hook(self):
        """callable: Records the start time of ``key``."""
        def callback(key):
            self.key_to_times.setdefault(key, [0, 0])[0] = self.timer()
        return callback

    @property
    def post_hook(self):
        """callable: Synchronises the device and records the end time of ``key``.

        Raises ``ValueError`` for a key whose pre hook did not run.
        """
        def callback(key):
            if key not in self.key_to_times:
                raise ValueError(f"CpuTimerCallback: post_hook({key}) without a pre_hook")
            self._synchronize(device_id=self.device_id)
            self.key_to_times[key][1] = self.timer()
        return callback

    @staticmethod
    def timer():
        """float: Current time in seconds."""
        return time.time()

    def calc_elapsed_time(self):
        """Append each key's last (end - start) to :attr:`results`."""
        for key, (start_time, end_time) in self.key_to_times.items():
            self.results.setdefault(key, []).append(end_time - start_time)

    def average(self, start_index=0):
        """dict: key -> ``{"time": mean milliseconds, "num": count, "scale": "ms"}`` over
        the measurements from ``start_index`` on."""
        return {key: {"time": np.mean(times[start_index:]) * 1e3,
                      "num": len(times) - start_index, "scale": "ms"}
                for key, times in self.results.items()}


class TimeProfiler(FunctionHookCallbackBase):
    """Per-function execution times, grouped by scope.

    Use :meth:`scope` around a ``forward``/``backward`` call given :attr:`pre_hook` and
    :attr:`post_hook`; the time of each whole scope is recorded under ``"summary"``. Call
    :meth:`calc_elapsed_time` once per iteration, then print with ``tp()`` or write CSV
    files with :meth:`to_csv`.

    Args:
        ext_name (str): ``'cpu'`` (host wall clock) or ``'cuda'``/``'cudnn'`` (the CUDA
            extension's event timer).
        device_id (str): Device id.

    Raises:
        NotImplementedError: For another extension.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> y = F.relu(nn.Variable.from_numpy_array(np.ones((2, 3))))
        >>> tp = TimeProfiler("cpu", device_id="0")
        >>> for _ in range(2):
        ...     with tp.scope("forward"):
        ...         y.forward(function_pre_hook=tp.pre_hook, function_post_hook=tp.post_hook)
        ...     tp.calc_elapsed_time(["forward", "summary"])
        >>> sorted(tp.get_all_results())
        ['forward', 'summary']
    """

    def __init__(self, ext_name, device_id):
        if ext_name == HOST_FAMILY:      # the host: wall-clock timers
            self.profiler = CpuTimerCallback
        elif ext_name in ("cuda", "cudnn"):
            self.profiler = import_extension_module(
                "cuda.utils.inspection").CudaEventTimerCallback
        else:
            raise NotImplementedError(
                f"TimeProfiler: no profiler for the extension {ext_name!r} (cpu, cuda, cudnn)")
        self.ext_name = ext_name
        self.device_id = device_id
        self._scope_name = ""
        self.profilers = {}
        self.create_new_profiler("summary")

    def create_new_profiler(self, scope_name):
        """Start a timer for ``scope_name``."""
        self.profilers[scope_name] = self.profiler(ext_name=self.ext_name,
                                                   device_id=self.device_id)

    @contextmanager
    def scope(self, scope_name):
        """Label the functions timed inside the block with ``scope_name``; the block's own
        time goes to the ``"summary"`` scope."""
        previous = self._scope_name
        try:
            if scope_name not in self.profilers:
                self.create_new_profiler(scope_name)
            self.call_pre_hook("summary", scope_name)
            self._scope_name = scope_name
            yield self
        finally:
            self._scope_name = previous
            self.call_post_hook("summary", scope_name)

    def _current(self):
        if self._scope_name not in self.profilers:
            raise ValueError("TimeProfiler: use pre_hook/post_hook inside a tp.scope(...) block")
        return self.profilers[self._scope_name]

    @property
    def pre_hook(self):
        """callable: ``function_pre_hook`` for the current scope."""
        profiler = self._current()
        return lambda key: profiler.pre_hook(key)

    @property
    def post_hook(self):
        """callable: ``function_post_hook`` for the current scope."""
        profiler = self._current()
        return lambda key: profiler.post_hook(key)

    def call_pre_hook(self, scope_name, key):
        """Start timing ``key`` in ``scope_name``."""
        if scope_name not in self.profilers:
            self.create_new_profiler(scope_name)
        self.profilers[scope_name].pre_hook(key)

    def call_post_hook(self, scope_name, key):
        """Stop timing ``key`` in ``scope_name``."""
        if scope_name not in self.profilers:
            raise ValueError(f"TimeProfiler: no profiler for the scope {scope_name!r}")
        self.profilers[scope_name].post_hook(key)

    def calc_elapsed_time(self, names=None):
        """Record the times of this iteration for the scopes ``names`` (all when None)."""
        if isinstance(names, str):
            names = [names]
        for profiler in (self.profilers.values() if names is None
                         else [self.profilers[name] for name in names]):
            profiler.calc_elapsed_time()

    def average(self, start_index=0):
        """dict: scope -> key -> mean time (see :meth:`CpuTimerCallback.average`)."""
        return {name: profiler.average(start_index) for name, profiler in self.profilers.items()}

    def get_all_results(self):
        """dict: scope -> key -> list of times, for the scopes that have any."""
        return {name: profiler.results for name, profiler in self.profilers.items()
                if len(profiler.results)}

    def to_csv(self, out_dir="./", ignore_init=True):
        """Write ``profile_summary.csv`` (scopes) and ``profile_detail.csv`` (functions).

        Args:
            out_dir (str): Output directory (created when missing).
            ignore_init (bool): Leave out the first iteration.
        """
        os.makedirs(out_dir, exist_ok=True)
        results = self.average(start_index=1 if ignore_init else 0)
        summary = [dict(result, scope=scope) for scope, result in results["summary"].items()]
        _write_dict_rows(os.path.join(out_dir, "profile_summary.csv"),
                         ["scope", "time", "scale", "num"], summary)
        rows, header = _detail_rows(results)
        _write_dict_rows(os.path.join(out_dir, "profile_detail.csv"),
                         ["scope", "original_key"] + header, rows)

    def __call__(self, *args, **kwargs):
        """Print the mean times per scope, leaving out the first iteration."""
        for name, results in self.average(start_index=1).items():
            if not results:
                continue
            print(f"### {name} ###")
            for key, result in results.items():
                print(f"{key}: {result['time']} [{result['scale']}]")
            print()


def _detail_rows(results):
    count_of_text, unique_of_key, out = {}, {}, {}
    for scope, scope_results in results.items():
        if scope == "summary":
            continue
        for key, result in scope_results.items():
            values = {f"{k}_{scope}": v for k, v in result.items()}
            if key in unique_of_key:
                out[unique_of_key[key]].update(values)
                continue
            count = count_of_text.get(str(key), 0)
            count_of_text[str(key)] = count + 1
            unique_of_key[key] = f"{key}_{count}"
            out[unique_of_key[key]] = values
    key_of_unique = {unique: key for key, unique in unique_of_key.items()}
    header = sorted({column for values in out.values() for column in values})
    rows = [dict(values, scope=unique, original_key=key_of_unique[unique])
            for unique, values in out.items()]
    return rows, header


def _write_dict_rows(path, fields, rows):
    from nnabla._atomic import write_atomically

    def write(f):
        writer = csv.DictWriter(f, fields)
        writer.writeheader()
        writer.writerows(rows)
    write_atomically(path, write, mode="w")
