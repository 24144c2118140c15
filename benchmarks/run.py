"""Run the benchmarks on our nnabla and, optionally, on nnabla 1.39 itself, in one go.

Usage::

    python benchmarks/run.py [--quick] [--reference-python /path/to/py310/bin/python]
                             [--only NAME ...] [--repeats N]

Every measurement runs in its own fresh subprocess; a case is repeated and the median
is reported. When a reference interpreter is given, ours and nnabla's runs alternate
so that both see the same machine load, and the table shows the ratio ours / nnabla.
The results are also written as JSON to ``benchmarks/results/`` (git-ignored).
The bench scripts use only nnabla's public API: the same files run on both.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
MARKER = "BENCH_RESULT "
TIMEOUT_SECONDS = 1800


@dataclass(frozen=True)
class Bench:
    """One benchmark case: which script runs it, how often, and its target from issue 2."""

    name: str
    script: str
    group: str
    repeats: int = 5
    quick_repeats: int = 3
    reference: bool = True   # False: the measure has no meaning on nnabla (tracemalloc)
    target: str = ""         # e.g. "ratio<=1.5" or "value<=10"


BENCHES = [
    Bench("mlp_step", "bench_training.py", "training", target="ratio<=1.5"),
    Bench("deep_cnn_static", "bench_training.py", "training", 3, 1, target="ratio<=0.5"),
    Bench("deep_cnn_dynamic", "bench_training.py", "training", 3, 1, target="ratio<=0.5"),
    Bench("deep_cnn_static_rss", "bench_training.py", "memory", 3, 1),
    Bench("deep_cnn_dynamic_rss", "bench_training.py", "memory", 3, 1),
    Bench("deep_cnn_static_traced", "bench_training.py", "memory", 1, 1, reference=False),
    Bench("deep_cnn_dynamic_traced", "bench_training.py", "memory", 1, 1, reference=False),
    Bench("dispatch_imperative", "bench_dispatch.py", "dispatch", target="value<=10"),
    Bench("dispatch_auto_forward", "bench_dispatch.py", "dispatch", target="value<=10"),
    Bench("dispatch_static_chain", "bench_dispatch.py", "dispatch", target="value<=3"),
] + [Bench(name, "bench_functions.py", "functions", 3, 1) for name in (
    "fn_convolution", "fn_max_pooling", "fn_average_pooling", "fn_batch_normalization",
    "fn_affine", "fn_tanh", "fn_deconvolution", "fn_layer_normalization", "fn_rnn", "fn_lstm",
    "fn_gru", "fn_multi_head_attention", "fn_interpolate", "fn_sort", "fn_top_k_data")]

# Pairs whose quotient issue 2 bounds: dynamic-mode peak within 10% of static mode.
MEMORY_PAIRS = [("deep_cnn_dynamic_rss", "deep_cnn_static_rss"),
                ("deep_cnn_dynamic_traced", "deep_cnn_static_traced")]


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def run_once(python, bench, quick, threads=None):
    """Run one case in a fresh process; return its result dict or an 'error' dict."""
    command = [python, os.path.join(HERE, bench.script), bench.name] + (["--quick"] * quick)
    env = dict(os.environ)
    if threads:
        env.update({name: str(threads) for name in THREAD_VARIABLES})
    try:
        done = subprocess.run(command, check=False, cwd=HERE, capture_output=True, text=True,
                              timeout=TIMEOUT_SECONDS, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_SECONDS} s"}
    for line in done.stdout.splitlines():
        if line.startswith(MARKER):
            return json.loads(line[len(MARKER):])
    tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"exit status {done.returncode}: {tail}"}


def summarize(samples):
    """Median and samples of the successful runs, or the first error."""
    values = [s["value"] for s in samples if "value" in s]
    if not values:
        return {"error": samples[0]["error"] if samples else "not run"}
    return {"median": statistics.median(values), "samples": values,
            "unit": next(s["unit"] for s in samples if "value" in s)}


def interpreter_info(python):
    """Python and nnabla versions of an interpreter."""
    code = ("import sys, nnabla; "
            "print(sys.version.split()[0], nnabla.__version__, nnabla.__file__)")
    done = subprocess.run([python, "-c", code], check=False, cwd=HERE, capture_output=True,
                          text=True)
    parts = (done.stdout.strip().splitlines() or ["? ? ?"])[-1].split()
    return {"python": python, "python_version": parts[0], "nnabla_version": parts[1],
            "nnabla_path": parts[-1]}


def meets(target, ours, ratio):
    """'yes'/'no' for a target such as 'ratio<=1.5' or 'value<=10'; '' when not checkable."""
    if not target:
        return ""
    kind, bound = target.split("<=")
    measured = ratio if kind == "ratio" else ours
    return "" if measured is None else ("yes" if measured <= float(bound) else "no")


def run_all(benches, ours, reference, quick, repeats, threads=None):
    """Measure every case, alternating ours and nnabla; return the result rows."""
    rows = []
    for bench in benches:
        count = repeats or (bench.quick_repeats if quick else bench.repeats)
        pythons = {"ours": ours}
        if reference and bench.reference:
            pythons["nnabla"] = reference
        samples = {key: [] for key in pythons}
        for _ in range(count):
            for key, python in pythons.items():
                samples[key].append(run_once(python, bench, quick, threads))
        row = {"name": bench.name, "group": bench.group, "target": bench.target}
        row.update({key: summarize(values) for key, values in samples.items()})
        rows.append(row)
        print(format_row(row), flush=True)
    return rows


def _median(row, key):
    return row.get(key, {}).get("median")


def format_row(row):
    """One table line: name, unit, ours, nnabla, ratio, target met."""
    ours, ref = _median(row, "ours"), _median(row, "nnabla")
    ratio = ours / ref if ours is not None and ref else None
    row["ratio"] = ratio
    unit = row["ours"].get("unit") or row.get("nnabla", {}).get("unit", "")
    cells = [row["name"], unit, _cell(row, "ours"), _cell(row, "nnabla"),
             "-" if ratio is None else f"{ratio:.2f}",
             f"{row['target']} {meets(row['target'], ours, ratio)}".strip()]
    return "{:<26} {:>8} {:>12} {:>12} {:>8}  {}".format(*cells)


def _cell(row, key):
    if key not in row:
        return "n/a"
    return "error" if "error" in row[key] else f"{row[key]['median']:.4g}"


def memory_ratios(rows):
    """Dynamic / static peak-memory quotients, per engine (target: <= 1.1)."""
    by_name = {row["name"]: row for row in rows}
    ratios = {}
    for dynamic, static in MEMORY_PAIRS:
        if dynamic in by_name and static in by_name:
            for key in ("ours", "nnabla"):
                top, bottom = _median(by_name[dynamic], key), _median(by_name[static], key)
                if top is not None and bottom:
                    ratios[f"{dynamic}/{static} ({key})"] = top / bottom
    return ratios


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    parser.add_argument("--reference-python", help="interpreter with nnabla 1.39 installed")
    parser.add_argument("--python", default=sys.executable, help="interpreter with ours")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="cases or groups (training, memory, dispatch, functions)")
    parser.add_argument("--repeats", type=int, help="override the number of repeats")
    parser.add_argument("--threads", type=int,
                        help="set OMP/OpenBLAS/MKL thread counts of both engines (default: "
                             "leave the environment alone)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="JSON folder")
    return parser.parse_args(argv)


def main(argv=None):
    """Run, print the table and write the JSON file; returns the exit status."""
    args = parse_args(argv)
    benches = [b for b in BENCHES
               if not args.only or b.name in args.only or b.group in args.only]
    if not benches:
        print(f"no benchmark matches {args.only}; known: {[b.name for b in BENCHES]}")
        return 2
    reference = args.reference_python
    if reference and not os.path.exists(reference):
        print(f"reference interpreter {reference} not found: measuring ours only")
        reference = None
    engines = {"ours": interpreter_info(args.python)}
    if reference:
        engines["nnabla"] = interpreter_info(reference)
    for key, info in engines.items():
        print(f"{key}: nnabla {info['nnabla_version']} from {info['nnabla_path']}, "
              f"Python {info['python_version']}")
    print("{:<26} {:>8} {:>12} {:>12} {:>8}  {}".format(
        "benchmark", "unit", "ours", "nnabla", "ratio", "target (issue 2) met"))
    rows = run_all(benches, args.python, reference, args.quick, args.repeats, args.threads)
    ratios = memory_ratios(rows)
    for name, value in ratios.items():
        print(f"{name}: {value:.3f} (target <= 1.10)")
    write_json(args.out, {"engines": engines, "quick": args.quick, "threads": args.threads,
                          "rows": rows,
                          "memory_ratios": ratios})
    return 0


def write_json(folder, report):
    """Write ``report`` with the date and machine to a new timestamped file in ``folder``."""
    os.makedirs(folder, exist_ok=True)
    now = datetime.datetime.now()
    report = dict(report, date=now.isoformat(timespec="seconds"), machine={
        "platform": platform.platform(), "processor": platform.processor(),
        "cpu_count": os.cpu_count()})
    path = os.path.join(folder, f"bench-{now:%Y%m%d-%H%M%S}.json")
    with open(path, "w") as stream:
        json.dump(report, stream, indent=1)
    print(f"results written to {path}")


if __name__ == "__main__":
    sys.exit(main())
