"""Benchmark of the CPU (MPI) communicator: all_reduce bandwidth against mpi4py's raw
``Allreduce`` on the same buffers, and the data-parallel digits training step.

Usage::

    python benchmarks/bench_comm.py [--sizes-mb 1 16 128] [--arrays 8] [--quick] [--json F]

The script starts itself under ``mpiexec -n 2`` (the ``--worker`` mode) and prints, per
buffer size (fp32):

- ``raw``: ``MPI.COMM_WORLD.Allreduce(IN_PLACE, buf, SUM)`` on one flat numpy buffer;
- ``raw, packed by numpy``: the same on ``--arrays`` numpy arrays copied into a reused
  flat buffer and back (the floor of any packing that copies);
- ``one array``: ``comm.all_reduce(ndarray)`` on an NdArray of that size;
- ``packed``: ``comm.all_reduce(list)`` of ``--arrays`` NdArrays of equal size summing to
  that size (the packed path used for gradients and by ``all_reduce_callback``), called
  again and again on the same arrays: after the first call they hold their results in the
  kept pack, so this is the cost without copies;
- ``packed, new storage``: the same, but before each call (untimed) every array gets new
  storage (``copy_from``), as backward gives gradients: the pack is filled by copying (the
  cost in a training step);
- ``packed, no layout check``: the same with ``NNABLA_MPI_CHECK_LAYOUT=0`` (no check that
  the ranks pass the same layout);
- ``inplace``: the same list with ``inplace=True`` (one message per array);

Each case has its own communicator, so each sees its call repeated, as a training loop
repeats its collectives: after a few calls the layout of a packed list is forecast and its
check rides in the data message (``packed`` and ``packed, new storage``; ``one array`` and
``inplace`` are checked by an exchange before the data, see docs/distributed.md).
Each case is timed as the median of repeated calls (a barrier before each; the order of the
cases rotates from one round to the next, and the first rounds are not timed): the
algorithm bandwidth (bytes / time) and the ratio to ``raw`` (target: <= 1.2), and the
median CPU time of rank 0 per call with its ratio to ``raw`` (on a loaded machine the wall
times follow the CPU times times the load, plus scheduling luck at each synchronisation;
the CPU times are steadier).
Then it times a training step of ``examples/train_digits_distributed.py`` with 2 processes
against 1 process (same global batch), also with ``NNABLA_MPI_CHECK_LAYOUT=0``. Results as
one ``BENCH_RESULT`` JSON line per measurement (see ``_harness.py``).
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "train_digits_distributed.py"
MARKER = "BENCH_RESULT "
MB = 1 << 20
# Untimed rounds first: a communicator forecasts a repeated layout from its fifth call.
WARM_UP = 5


def _mpiexec():
    here = pathlib.Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        sys.exit("bench_comm: no mpiexec next to the interpreter or on PATH "
                 "(pip install 'nnabla-ext-cpu[mpi]')")
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    flags = []
    if "Open MPI" in version or "OpenRTE" in version or "prte" in version:
        flags.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            flags.append("--allow-run-as-root")
    return [found, *flags]


def _median_seconds(cases, barrier, repeats):
    """``({name: median seconds}, {name: median CPU seconds})`` of this process; the cases
    take turns (after ``WARM_UP`` untimed rounds), so they see the same machine load, their
    order rotating from round to round (the same on every rank), so none is always first
    after another. A case is a callable, or ``(setup, run)`` with an untimed ``setup``."""
    times = {name: [] for name in cases}
    cpu = {name: [] for name in cases}
    names = list(cases)
    for repeat in range(repeats + WARM_UP):
        turn = repeat % len(names)
        for name in names[turn:] + names[:turn]:
            run = cases[name]
            if isinstance(run, tuple):
                setup, run = run
                setup()
            barrier()
            start, start_cpu = time.perf_counter(), time.process_time()
            run()
            if repeat >= WARM_UP:
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
    return ({name: statistics.median(values) for name, values in times.items()},
            {name: statistics.median(values) for name, values in cpu.items()})


def worker(args):
    """Under mpiexec: time the all-reduce variants; rank 0 prints the results."""
    import numpy as np
    from mpi4py import MPI

    import nnabla as nn
    import nnabla.communicators as C
    from nnabla.ext_utils import get_extension_context

    def communicator():
        made = C.MultiProcessCommunicator(get_extension_context("cpu"))
        made.init()
        return made
    comm, comm_packed, comm_renewed, comm_inplace = (communicator() for _ in range(4))
    os.environ["NNABLA_MPI_CHECK_LAYOUT"] = "0"      # read when a communicator is made
    unchecked = communicator()
    del os.environ["NNABLA_MPI_CHECK_LAYOUT"]
    world = MPI.COMM_WORLD
    for size_mb in args.sizes_mb:
        count = int(size_mb * MB) // 4
        repeats = max(5, min(50, int(800 / size_mb))) // (3 if args.quick else 1)
        flat = np.full(count, 1e-3, np.float32)
        one = nn.NdArray.from_numpy_array(flat.copy())

        def split():
            return [nn.NdArray.from_numpy_array(a.copy())
                    for a in np.array_split(flat, args.arrays)]

        # each case its own arrays: a communicator keeps the arrays of a packed list in its
        # pack buffer, so two communicators taking turns on the same arrays would copy
        parts, unchecked_parts, inplace_parts, renewed, sources = (split() for _ in range(5))
        host_parts = np.array_split(flat.copy(), args.arrays)

        def renew():
            for array, source in zip(renewed, sources):
                array.copy_from(source)
        scratch = np.empty(count, np.float32)

        def raw_packed():
            np.concatenate(host_parts, out=scratch)
            world.Allreduce(MPI.IN_PLACE, scratch, MPI.SUM)
            start = 0
            for part in host_parts:
                part[...] = scratch[start:start + part.size]
                start += part.size

        cases = {
            "raw": lambda: world.Allreduce(MPI.IN_PLACE, flat, MPI.SUM),
            "raw, packed by numpy": raw_packed,
            "one array": lambda: comm.all_reduce(one),
            "packed": lambda: comm_packed.all_reduce(parts),
            "packed, new storage": (renew, lambda: comm_renewed.all_reduce(renewed)),
            "packed, no layout check": lambda: unchecked.all_reduce(unchecked_parts),
            "inplace": lambda: comm_inplace.all_reduce(inplace_parts, inplace=True),
        }
        seconds, cpu = _median_seconds(cases, world.Barrier, repeats)
        if comm.rank == 0:
            for name, t in seconds.items():
                print(MARKER + json.dumps({
                    "case": f"all_reduce {name}", "size_mb": size_mb, "arrays":
                    1 if name in ("raw", "one array") else args.arrays, "seconds": t,
                    "gb_per_s": size_mb * MB / t / 1e9, "ratio_to_raw": t / seconds["raw"],
                    "cpu_seconds": cpu[name], "cpu_ratio_to_raw": cpu[name] / cpu["raw"],
                    "repeats": repeats, "load_average": os.getloadavg()[0]}), flush=True)


def _step_ms(command, env):
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"bench_comm: {' '.join(command)} failed:\n{out.stdout}\n{out.stderr}")
    found = re.search(r"([0-9.]+) ms/step", out.stdout)
    return float(found.group(1))


def training(args, mpiexec, env):
    """Seconds per step of the digits example: 2 processes against 1 (median of runs)."""
    common = [str(EXAMPLE), "--epochs", "2" if args.quick else "4", "--min-accuracy", "0",
              "--out", str(HERE / "results" / "bench_comm_digits.h5")]
    runs = 1 if args.quick else 3
    single = [_step_ms([sys.executable, *common, "--single-process"], env)
              for _ in range(runs)]
    double = [_step_ms([*mpiexec, "-n", "2", sys.executable, *common], env)
              for _ in range(runs)]
    unchecked = [_step_ms([*mpiexec, "-n", "2", sys.executable, *common],
                          dict(env, NNABLA_MPI_CHECK_LAYOUT="0")) for _ in range(runs)]
    rows = (("1 process", single), ("2 processes", double),
            ("2 processes, NNABLA_MPI_CHECK_LAYOUT=0", unchecked))
    return [{"case": f"digits step {name}", "ms_per_step": statistics.median(values),
             "runs": values} for name, values in rows]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[1, 16, 128])
    parser.add_argument("--arrays", type=int, default=8,
                        help="arrays of the packed and inplace cases")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json", help="also write the results to this file")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return 0
    mpiexec = _mpiexec()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    (HERE / "results").mkdir(exist_ok=True)
    forwarded = ["--sizes-mb", *map(str, args.sizes_mb), "--arrays", str(args.arrays)]
    forwarded += ["--quick"] if args.quick else []
    out = subprocess.run([*mpiexec, "-n", "2", sys.executable, __file__, "--worker",
                          *forwarded], capture_output=True, text=True, env=env, timeout=1800)
    if out.returncode != 0:
        sys.exit(f"bench_comm: the MPI job failed:\n{out.stdout}\n{out.stderr}")
    records = [json.loads(line[len(MARKER):]) for line in out.stdout.splitlines()
               if line.startswith(MARKER)]
    for record in records:
        print(MARKER + json.dumps(record), flush=True)
    if not args.skip_training:
        for record in training(args, mpiexec, env):
            records.append(record)
            print(MARKER + json.dumps(record), flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
