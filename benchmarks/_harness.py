"""Shared helpers of the benchmark scripts.

Each ``bench_*.py`` script runs one named case per process and prints its result as
one JSON line prefixed with :data:`MARKER`, which ``run.py`` parses. The scripts use
only nnabla's public API, so the same file runs on nnabla 1.39 and on ours.
Keep this module compatible with Python 3.10 (the reference interpreter).
"""
import argparse
import json
import os
import resource
import sys
import time
import tracemalloc

MARKER = "BENCH_RESULT "


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def configured_threads():
    """Threads the process was told to use: the first of ``OMP_NUM_THREADS``,
    ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` that is set, else the core count
    (the default of OpenBLAS, OpenMP and PyTorch)."""
    for name in THREAD_VARIABLES:
        if os.environ.get(name, "").strip().isdigit():
            return int(os.environ[name])
    return os.cpu_count() or 1


def os_threads():
    """Threads the process has now (Linux ``/proc``), or None elsewhere."""
    try:
        with open("/proc/self/status") as stream:
            for line in stream:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def emit(value, unit, **extra):
    """Print a result line for ``run.py``: ``value`` in ``unit`` plus extra fields.

    Every line also carries ``threads`` (see :func:`configured_threads`; a twin script
    passes its framework's own count), ``os_threads`` and ``peak_mb`` (the process's
    RSS high-water mark, MiB) unless given.
    """
    record = {"value": value, "unit": unit, "threads": configured_threads(),
              "os_threads": os_threads(), "peak_mb": max_rss_mb()}
    record.update(extra)
    sys.stdout.write(MARKER + json.dumps(record) + "\n")
    sys.stdout.flush()


def seconds_per_call(function, iterations, warmup=1):
    """Mean time of ``function()`` over ``iterations`` calls, after warm-up."""
    for _ in range(warmup):
        function()
    start = time.perf_counter()
    for _ in range(iterations):
        function()
    return (time.perf_counter() - start) / iterations


def seconds_per_call_each(function, iterations, warmup=1):
    """Time of each of ``iterations`` calls of ``function()``, after warm-up, in seconds."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return times


def max_rss_mb():
    """The process's resident-set high-water mark so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_delta_mb(function, iterations):
    """Growth of the RSS high-water mark while ``function()`` runs ``iterations`` times."""
    before = max_rss_mb()
    for _ in range(iterations):
        function()
    return max_rss_mb() - before


def traced_peak_mb(function, iterations):
    """Peak of tracemalloc-traced memory above its level at the start, in MiB.

    numpy reports its buffers to tracemalloc, so this sees arrays held by an engine
    written on numpy; it does not see memory allocated by C++ code directly.
    """
    tracemalloc.start()
    start, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    for _ in range(iterations):
        function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (peak - start) / 2.0 ** 20


# The device the case runs on (``--device``) and the function that waits for it.
DEVICE = {"name": "cpu", "synchronize": None}


def device():
    """The device of this run: 'cpu' (default) or 'cuda'."""
    return DEVICE["name"]


def synchronized(step):
    """``step`` itself on the CPU; on a device, ``step`` followed by a device
    synchronisation, so that timing it measures the work and not the launches."""
    sync = DEVICE["synchronize"]
    if sync is None:
        return step

    def run():
        result = step()
        sync()
        return result
    return run


def run_case(cases, argv=None, device_setup=None):
    """Command line of a bench script: ``script.py CASE [--quick] [--device cuda]``; runs
    ``cases[CASE]``. ``device_setup(device)`` (see ``_gpu.py``) prepares a device run and
    returns its synchronize function; a script without one accepts only the CPU."""
    parser = argparse.ArgumentParser()
    parser.add_argument("case", choices=sorted(cases))
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="where the case runs (cuda: see _gpu.py)")
    args = parser.parse_args(argv)
    if args.device != "cpu":
        if device_setup is None:
            parser.error(f"--device {args.device}: this script measures the CPU only")
        try:
            DEVICE["synchronize"] = device_setup(args.device)
        except SystemExit as e:
            sys.stderr.write(getattr(e, "message", str(e)) + "\n")
            raise
        DEVICE["name"] = args.device
    cases[args.case](args.quick)


def digits_batch(batch_size=64, index=0):
    """One batch of scikit-learn's 8x8 digits: images (B, 1, 8, 8) and labels (B, 1)."""
    import numpy as np
    from sklearn.datasets import load_digits

    digits = load_digits()
    rows = (np.arange(batch_size) + index * batch_size) % len(digits.target)
    images = digits.images[rows].astype(np.float32)[:, None]
    labels = digits.target[rows].astype(np.int32)[:, None]
    return images, labels
