"""Run the benchmarks on our nnabla and, optionally, on nnabla 1.39 and PyTorch, in one go.

Usage::

    python benchmarks/run.py [--quick] [--reference-python PYTHON] [--python PYTHON]
                             [--torch-python PYTHON | --no-torch]
                             [--only NAME ...] [--repeats N] [--threads N]
                             [--device cuda]

``--reference-python`` (default: the ``NNABLA_REFERENCE_PYTHON`` environment variable)
is an interpreter with nnabla 1.39 installed; ``--python`` (default: this interpreter)
is the one with ours; ``--torch-python`` (default: the ``--python`` one) runs the
PyTorch twins (``torch_*.py``) when ``import torch`` works there.

Every measurement runs in its own fresh subprocess; a case is repeated and the median
is reported. Ours, nnabla's and PyTorch's runs alternate so that all see the same
machine load, and the table shows the ratios ours / nnabla and ours / PyTorch.
The results are also written as JSON to ``benchmarks/results/`` (git-ignored).
The bench scripts use only nnabla's public API: the same files run on both nnablas.

``--device cuda`` runs the GPU workloads (:data:`GPU_ROWS`: ResNet-18 and the Transformer
encoder step times) in nnabla's ``cudnn`` context and the twins on ``torch.cuda``, in the
same alternating runs (see ``_gpu.py``); it refuses, saying why, where ours has no usable
CUDA device, and skips the twins (or nnabla 1.39) where they have none.
"""
import argparse
import dataclasses
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
REFERENCE_VARIABLE = "NNABLA_REFERENCE_PYTHON"
ROW_FORMAT = "{:<30} {:>8} {:>10} {:>10} {:>10} {:>6} {:>6}"


@dataclass(frozen=True)
class Bench:
    """One row of the table: which script and case measure it, how often, its targets.

    Several rows can read different fields of the same measurement: they share ``case``
    (the process that runs, default ``name``), and each takes its ``field`` of the
    result line (default ``value``) in ``unit`` (default: the unit the script reports).
    """

    name: str
    script: str
    group: str
    repeats: int = 5
    quick_repeats: int = 3
    reference: bool = True   # False: the measure has no meaning on nnabla (tracemalloc)
    targets: tuple = ()      # ("ratio<=1.5", issue) or ("value<=10", issue) pairs
    case: str = ""
    field: str = "value"
    unit: str = ""
    twin: bool = False       # a PyTorch twin of the case exists in torch_<script>

    @property
    def twin_script(self):
        """The PyTorch twin script: ``bench_x.py`` -> ``torch_x.py``."""
        return self.script.replace("bench_", "torch_", 1)

    @property
    def process(self):
        """The case name passed to the script."""
        return self.case or self.name


def _resnet18(case, rss_ratio=None):
    """Rows of one ResNet-18 measurement: RSS growth, absolute peak RSS, step time."""
    targets = ((f"ratio<={rss_ratio:.1f}", 6),) if rss_ratio else ()
    return [Bench(f"{case}_rss", "bench_resnet.py", "resnet", 3, 1, targets=targets,
                  case=case, twin=True),
            Bench(f"{case}_peak", "bench_resnet.py", "resnet", 3, 1, targets=targets,
                  case=case, field="peak_mb", unit="MiB", twin=True),
            Bench(f"{case}_time", "bench_resnet.py", "resnet", 3, 1, case=case,
                  field="seconds", unit="s/iter", twin=True)]


FUNCTIONS = (
    "fn_convolution", "fn_convolution_1x1", "fn_convolution_strided",
    "fn_convolution_depthwise", "fn_convolution_grouped", "fn_convolution_dilated",
    "fn_convolution_channel_last", "fn_deconvolution", "fn_max_pooling",
    "fn_average_pooling", "fn_batch_normalization", "fn_layer_normalization", "fn_softmax",
    "fn_gelu", "fn_tanh", "fn_affine", "fn_batch_matmul", "fn_lstm", "fn_rnn", "fn_gru",
    "fn_multi_head_attention", "fn_interpolate", "fn_sort", "fn_top_k_data")


BENCHES = [
    Bench("mlp_step", "bench_training.py", "training",
          targets=(("ratio<=1.5", 2), ("ratio<=0.9", 6))),
    Bench("deep_cnn_static", "bench_training.py", "training", 3, 1,
          targets=(("ratio<=0.5", 2), ("torch<=1.25", 10)), twin=True),
    Bench("deep_cnn_dynamic", "bench_training.py", "training", 3, 1,
          targets=(("ratio<=0.5", 2), ("torch<=1.25", 10)), twin=True),
    Bench("deep_cnn_static_rss", "bench_training.py", "memory", 3, 1),
    Bench("deep_cnn_dynamic_rss", "bench_training.py", "memory", 3, 1),
    Bench("deep_cnn_static_traced", "bench_training.py", "memory", 1, 1, reference=False),
    Bench("deep_cnn_dynamic_traced", "bench_training.py", "memory", 1, 1, reference=False),
    Bench("dispatch_imperative", "bench_dispatch.py", "dispatch",
          targets=(("value<=10", 2), ("value<=5", 6))),
    Bench("dispatch_auto_forward", "bench_dispatch.py", "dispatch",
          targets=(("value<=10", 2), ("value<=5", 6))),
    Bench("dispatch_auto_forward_chain", "bench_dispatch.py", "dispatch",
          targets=(("value<=5", 6),)),
    Bench("dispatch_static_chain", "bench_dispatch.py", "dispatch",
          targets=(("value<=3", 2), ("ratio<=1.2", 6))),
    Bench("dispatch_static_chain_fwd_bwd", "bench_dispatch.py", "dispatch",
          targets=(("ratio<=1.5", 6),)),
] + _resnet18("resnet18_train", 1.0) + _resnet18("resnet18_infer", 1.0) + _resnet18(
    "resnet18_dynamic") + _resnet18("resnet18_infer_b1") + [
    Bench("transformer_train", "bench_transformer.py", "transformer", 3, 1,
          targets=(("torch<=1.25", 10),), twin=True)] + [
    Bench(name + suffix, "bench_nnp.py", "nnp", 5, 3, targets=(("ratio<=1.0", 8),),
          case=name, field=field, unit="ms")
    for name in ("nnp_save", "nnp_load", "nnp_loader", "nnp_get_network")
    for suffix, field in (("", "value"), ("_cpu", "cpu_ms"))] + [
    Bench(name, "bench_functions.py", "functions", 3, 1, targets=(("torch<=1.25", 10),),
          twin=True) for name in FUNCTIONS]

# The six workloads of issue 10, in its order: (label, row); ``--only workloads`` runs them
# and a summary (ms/step, peak RSS, threads of each engine) follows the table.
WORKLOADS = (("deep CNN b64, static", "deep_cnn_static"),
             ("deep CNN b64, dynamic", "deep_cnn_dynamic"),
             ("ResNet-18 train b32", "resnet18_train_time"),
             ("ResNet-18 inference b1", "resnet18_infer_b1_time"),
             ("ResNet-18 inference b32", "resnet18_infer_time"),
             ("Transformer encoder train", "transformer_train"))
_TIMED = {name for _, name in WORKLOADS[2:5]}
BENCHES = [dataclasses.replace(b, targets=b.targets + (("torch<=1.25", 10),))
           if b.name in _TIMED else b for b in BENCHES]

# The rows --device cuda runs, with their target (issue 12: within 1.25x of PyTorch eager).
GPU_ROWS = ("resnet18_train_time", "resnet18_dynamic_time", "resnet18_infer_time",
            "resnet18_infer_b1_time", "transformer_train")
GPU_TARGETS = (("torch<=1.25", 12),)

# Pairs whose quotient (dynamic-mode peak / static-mode peak, same engine) an issue
# bounds: within 10% for the deep CNN (issue 2), within 5% for ResNet-18 (issue 6).
MEMORY_PAIRS = [("deep_cnn_dynamic_rss", "deep_cnn_static_rss", 1.10, 2),
                ("deep_cnn_dynamic_traced", "deep_cnn_static_traced", 1.10, 2),
                ("resnet18_dynamic_rss", "resnet18_train_rss", 1.05, 6),
                ("resnet18_dynamic_peak", "resnet18_train_peak", 1.05, 6)]


# Thread counts --threads sets: OpenMP (PyTorch and oneDNN read it too), OpenBLAS, MKL.
# Our CPU plugin's pool (native loops and OpenBLAS's jobs) follows OMP_NUM_THREADS too
# (NNABLA_CPU_NUM_THREADS in the environment overrides it).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
ENGINES = ("ours", "nnabla", "torch")


def run_once(python, bench, quick, threads=None, script=None, device="cpu"):
    """Run one case in a fresh process; return its result dict or an 'error' dict."""
    command = [python, os.path.join(HERE, script or bench.script), bench.process] + (
        ["--quick"] * quick) + (["--device", device] if device != "cpu" else [])
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


def summarize(samples, field="value", unit=""):
    """Median and samples of ``field`` over the successful runs, or the first error."""
    values = [s[field] for s in samples if field in s]
    if not values:
        errors = [s["error"] for s in samples if "error" in s]
        return {"error": errors[0] if errors else f"no field {field!r}"}
    summary = {"median": statistics.median(values), "samples": values,
               "unit": unit or next(s["unit"] for s in samples if field in s)}
    for extra in ("peak_mb", "threads", "os_threads"):
        found = [s[extra] for s in samples if s.get(extra) is not None]
        if found:
            summary[extra] = statistics.median(found)
    return summary


def has_torch(python):
    """Whether ``import torch`` works in ``python`` (PyTorch is never a dependency)."""
    done = subprocess.run([python, "-c", "import torch"], check=False, capture_output=True)
    return done.returncode == 0


# Each prints "ok" or the reason the engine cannot run on a CUDA device.
_CUDA_PROBES = {
    # ours says why (available()); nnabla 1.39's extension only counts
    "nnabla": ("import nnabla, nnabla_ext.cuda as c\n"
               "try:\n"
               "    ok, why = c.available() if hasattr(c, 'available') else "
               "(c.get_device_count() > 0, 'no CUDA device')\n"
               "except Exception as e:\n    ok, why = False, f'{type(e).__name__}: {e}'\n"
               "print('ok' if ok else why)"),
    "torch": ("import torch\nprint('ok' if torch.cuda.is_available() else "
              "f'PyTorch {torch.__version__}: torch.cuda.is_available() is False')"),
}


def cuda_reason(python, engine):
    """``None`` when ``engine`` ('nnabla' for ours and nnabla 1.39, 'torch') sees a CUDA
    device in ``python`` (never the numpy emulation), else the reason."""
    env = dict(os.environ, NNABLA_CUDA_EMULATE="0")
    done = subprocess.run([python, "-c", _CUDA_PROBES[engine]], check=False, cwd=HERE,
                          capture_output=True, text=True, env=env, timeout=600)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines and lines[-1] == "ok":
        return None
    return (lines or done.stderr.strip().splitlines() or ["no output"])[-1]


def select(benches, only, device):
    """The rows to run: those ``only`` names (rows, cases, groups, 'workloads'), and on a
    device only :data:`GPU_ROWS`, with the GPU target."""
    workloads = {name for _, name in WORKLOADS} if "workloads" in only else set()
    chosen = [b for b in benches
              if not only or only & {b.name, b.process, b.group} or b.name in workloads]
    if device == "cpu":
        return chosen
    return [dataclasses.replace(b, targets=GPU_TARGETS) for b in chosen if b.name in GPU_ROWS]


def interpreter_info(python):
    """Python and nnabla versions of an interpreter."""
    code = ("import sys, nnabla; "
            "print(sys.version.split()[0], nnabla.__version__, nnabla.__file__)")
    done = subprocess.run([python, "-c", code], check=False, cwd=HERE, capture_output=True,
                          text=True)
    parts = (done.stdout.strip().splitlines() or ["? ? ?"])[-1].split()
    return {"python": python, "python_version": parts[0], "nnabla_version": parts[1],
            "nnabla_path": parts[-1]}


def meets(target, ours, ratio, torch_ratio=None):
    """'yes'/'no' for a target such as 'ratio<=1.5' (ours / nnabla), 'torch<=1.25' (ours /
    PyTorch) or 'value<=10'; '' when not checkable."""
    kind, bound = target.split("<=")
    measured = {"ratio": ratio, "torch": torch_ratio}.get(kind, ours)
    return "" if measured is None else ("yes" if measured <= float(bound) else "no")


def run_all(benches, ours, reference, quick, repeats, threads=None, torch=None,
            device="cpu"):
    """Measure every case, alternating ours, nnabla and PyTorch; return the result rows.

    ``torch`` is an interpreter with PyTorch for the twins, or None. Rows that share a
    process case (``Bench.case``) are filled from the same runs.
    """
    rows = []
    processes = {}
    for bench in benches:
        processes.setdefault((bench.script, bench.process), []).append(bench)
    for group in processes.values():
        count = repeats or max(b.quick_repeats if quick else b.repeats for b in group)
        pythons = {"ours": (ours, None)}
        if reference and all(b.reference for b in group):
            pythons["nnabla"] = (reference, None)
        if torch and group[0].twin:
            pythons["torch"] = (torch, group[0].twin_script)
        samples = {key: [] for key in pythons}
        for _ in range(count):
            for key, (python, script) in pythons.items():
                samples[key].append(run_once(python, group[0], quick, threads, script,
                                             device))
        for bench in group:
            row = {"name": bench.name, "group": bench.group, "case": bench.process,
                   "field": bench.field}
            row.update({key: summarize(values, bench.field, bench.unit)
                        for key, values in samples.items()})
            row["targets"] = [{"target": target, "issue": issue} for target, issue in
                              bench.targets]
            rows.append(row)
            print(format_row(row), flush=True)
    return rows


def _median(row, key):
    return row.get(key, {}).get("median")


def _quotient(top, bottom):
    return top / bottom if top is not None and bottom else None


def _fixed(value):
    return "-" if value is None else f"{value:.2f}"


def format_row(row):
    """One table line: name, unit, ours, nnabla, PyTorch, ours/nnabla, ours/PyTorch,
    targets met (and their issue)."""
    ours = _median(row, "ours")
    ratio = _quotient(ours, _median(row, "nnabla"))
    torch_ratio = _quotient(ours, _median(row, "torch"))
    row["ratio"], row["torch_ratio"] = ratio, torch_ratio
    unit = next((row[k]["unit"] for k in ENGINES if row.get(k, {}).get("unit")), "")
    for target in row["targets"]:
        target["met"] = meets(target["target"], ours, ratio, torch_ratio)
    met = "; ".join(f"{t['target']} {t['met'] or '?'} (#{t['issue']})" for t in row["targets"]
                    if t["met"] or not t["target"].startswith("torch"))
    cells = [row["name"], unit, _cell(row, "ours"), _cell(row, "nnabla"), _cell(row, "torch"),
             _fixed(ratio), _fixed(torch_ratio), met]
    return (ROW_FORMAT + "  {}").format(*cells).rstrip()


def workload_summary(rows):
    """Lines of the issue-10 workload table: ms/step, peak RSS (MiB) and threads of each
    engine, ours / nnabla and ours / PyTorch."""
    by_name = {row["name"]: row for row in rows}
    lines = []
    for label, name in WORKLOADS:
        row = by_name.get(name)
        if row is None:
            continue
        scale = 1e3 if row["ours"].get("unit") == "s/iter" else 1.0
        cells = []
        for key in ENGINES:
            part = row.get(key, {})
            if "median" not in part:
                cells.append(f"{key} {'error' if 'error' in part else 'n/a'}")
                continue
            peak = part.get("peak_mb")
            cells.append(f"{key} {part['median'] * scale:.4g} ms, "
                         f"{'?' if peak is None else f'{peak:.0f}'} MiB, "
                         f"{part.get('threads', '?')} thr")
        lines.append(f"{label:<27} " + " | ".join(cells) + f" | ours/nnabla "
                     f"{_fixed(row.get('ratio'))}, ours/torch {_fixed(row.get('torch_ratio'))}")
    return lines


def _cell(row, key):
    if key not in row:
        return "n/a"
    return "error" if "error" in row[key] else f"{row[key]['median']:.4g}"


def memory_ratios(rows):
    """Dynamic / static peak-memory quotients per engine, with their bound and issue."""
    by_name = {row["name"]: row for row in rows}
    ratios = {}
    for dynamic, static, bound, issue in MEMORY_PAIRS:
        if dynamic in by_name and static in by_name:
            for key in ("ours", "nnabla"):
                top, bottom = _median(by_name[dynamic], key), _median(by_name[static], key)
                if top is not None and bottom:
                    ratios[f"{dynamic}/{static} ({key})"] = {
                        "ratio": top / bottom, "bound": bound, "issue": issue}
    return ratios


def parse_args(argv=None):
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations and repeats")
    parser.add_argument("--reference-python", default=os.environ.get(REFERENCE_VARIABLE),
                        help="interpreter with nnabla 1.39 installed (default: the "
                             f"{REFERENCE_VARIABLE} environment variable)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with ours")
    parser.add_argument("--torch-python",
                        help="interpreter with PyTorch for the twins (default: --python; "
                             "twins run only where 'import torch' works)")
    parser.add_argument("--no-torch", action="store_true", help="skip the PyTorch twins")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="rows, their process cases (e.g. resnet18_train) or groups "
                             "(training, memory, dispatch, resnet, transformer, functions, "
                             "nnp, workloads: the six of issue 10)")
    parser.add_argument("--repeats", type=int, help="override the number of repeats")
    parser.add_argument("--threads", type=int,
                        help="set the OMP/OpenBLAS/MKL thread counts of every engine, "
                             "PyTorch's too (default: leave the environment alone)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cuda: the GPU workloads in the cudnn context and on "
                             "torch.cuda (refused without a CUDA device)")
    parser.add_argument("--out", default=os.path.join(HERE, "results"), help="JSON folder")
    return parser.parse_args(argv)


def main(argv=None):
    """Run, print the table and write the JSON file; returns the exit status."""
    args = parse_args(argv)
    benches = select(BENCHES, set(args.only or ()), args.device)
    if not benches:
        known = list(GPU_ROWS) if args.device != "cpu" else [b.name for b in BENCHES]
        print(f"no benchmark matches {args.only} on {args.device}; known: {known}")
        return 2
    reference = args.reference_python
    if reference and not os.path.exists(reference):
        print(f"reference interpreter {reference} not found: measuring ours only")
        reference = None
    if args.device != "cpu":
        why = cuda_reason(args.python, "nnabla")
        if why is not None:
            print(f"--device {args.device}: refused: ours ({args.python}) cannot use a CUDA "
                  f"device: {why}")
            return 3
        why = reference and cuda_reason(reference, "nnabla")
        if why:
            print(f"reference {reference} has no usable nnabla-ext-cuda ({why}): "
                  "measuring without nnabla 1.39")
            reference = None
    engines = {"ours": interpreter_info(args.python)}
    if reference:
        engines["nnabla"] = interpreter_info(reference)
    for key, info in engines.items():
        print(f"{key}: nnabla {info['nnabla_version']} from {info['nnabla_path']}, "
              f"Python {info['python_version']}")
    torch = None if args.no_torch else (args.torch_python or args.python)
    if torch and not has_torch(torch):
        print(f"torch: not importable in {torch}: PyTorch twins skipped")
        torch = None
    elif torch and args.device != "cpu" and cuda_reason(torch, "torch"):
        print(f"torch: {cuda_reason(torch, 'torch')}: PyTorch twins skipped")
        torch = None
    elif torch:
        engines["torch"] = {"python": torch}
        print(f"torch: twins run in {torch}")
    print(f"threads: {args.threads or 'environment defaults'}; load average before: "
          f"{_load()}")
    print((ROW_FORMAT + "  {}").format(
        "benchmark", "unit", "ours", "nnabla", "torch", "o/n", "o/t", "target met (issue)"))
    print(f"device: {args.device}")
    rows = run_all(benches, args.python, reference, args.quick, args.repeats, args.threads,
                   torch, args.device)
    load_after = _load()
    summary = workload_summary(rows)
    if summary:
        issue = "issue 10" if args.device == "cpu" else f"issue 12, {args.device}"
        print(f"\nworkloads ({issue}): ms/step, peak RSS, threads; ratios of the medians")
        print("\n".join(summary))
    print(f"load average after: {load_after}")
    ratios = memory_ratios(rows)
    for name, value in ratios.items():
        met = "yes" if value["ratio"] <= value["bound"] else "no"
        print(f"{name}: {value['ratio']:.3f} (target <= {value['bound']:.2f}: {met}, "
              f"#{value['issue']})")
    write_json(args.out, {"engines": engines, "quick": args.quick, "threads": args.threads,
                          "device": args.device,
                          "rows": rows, "load_after": load_after,
                          "memory_ratios": ratios})
    return 0


def _load():
    """The 1, 5 and 15 minute load averages (other processes share the machine)."""
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "unknown"


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
