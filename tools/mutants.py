"""Hand-written semantic mutants of the kernels, solvers and engine, run against the tests.

Each mutant is one exact text replacement in one source file (a plausible bug: a wrong
derivative, a swapped factor, a changed default). The tool exports the committed tree
(``git archive HEAD``) into a temporary directory, makes that copy importable ahead of the
installed editable packages (``nnabla`` and ``nnabla_ext.cpu``, with the installed compiled
``_native`` module copied in), checks that the selected tests pass there unmutated, then for
each mutant applies it to the copy, runs its targeted tests, and restores the file. The working
tree is never touched. A mutant is *killed* when its tests fail; one whose text no longer
occurs in the source is reported as *stale* (update the list); one that cannot change any
observable behaviour carries the reason (``equivalent``) and is listed, not run.

Usage::

    python tools/mutants.py                     # every mutant; markdown report on stdout
    python tools/mutants.py --list
    python tools/mutants.py --only sgdw-lr-ratio gelu-erf-backward
    python tools/mutants.py --report tools/mutants_report.md

Exit status: 0 when every mutant is killed (or explained as equivalent), 1 when one survives
or is stale, 2 when the unmutated baseline fails.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
KERNELS = "plugins/nnabla_ext_cpu/nnabla_ext/cpu/kernels/"
SOLVERS = "plugins/nnabla_ext_cpu/nnabla_ext/cpu/solvers.py"
TIMEOUT = 600


@dataclasses.dataclass(frozen=True)
class Mutant:
    """One semantic mutant: replace ``old`` (exactly one occurrence) with ``new`` in ``path``."""
    id: str
    path: str
    old: str
    new: str
    tests: tuple
    what: str
    equivalent: str = ""     # why no test can tell it from the source (reported, not run)


def function_tests(name):
    """The generic case tests and recorded values of one function (pytest ``-k`` on ids)."""
    return ("tests/functions/test_kernels.py", "tests/functions/test_functions.py",
            "tests/functions/test_double_backward.py",
            "tests/functions/test_recorded_nnabla_values.py", "-k", name)


SOLVER_TESTS = ("tests/solvers",)
BN_TESTS = ("tests/functions/test_recorded_nnabla_values.py", "tests/functions/test_kernels.py",
            "tests/functions/test_functions.py", "-k",
            "atch_normalization or BatchNormalization")
ENGINE_TESTS = ("tests/core/test_graph.py", "tests/core/test_function_calls.py",
                "tests/core/test_keeps_inputs.py", "tests/core/test_auto_forward_memory.py",
                "tests/functions/test_functions.py", "-k",
                "not test_functions or accumulates or modes")
GRAPH = "nnabla_core/_graph.py"
GELU_ERF = """    import math
    erf = xp.vectorize(math.erf)
    pdf = xp.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    return dy * (0.5 * (1 + erf(x / math.sqrt(2))) + x * pdf)
    t = xp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x))"""

MUTANTS = [
    # --------------------------------------------------------------- kernels
    Mutant("sigmoid-backward-sign", KERNELS + "activation.py",
           "lambda xp, x, y, dy: dy * y * (1 - y))", "lambda xp, x, y, dy: dy * y * (1 + y))",
           function_tests("Sigmoid"), "sigmoid's derivative y(1 + y)"),
    Mutant("tanh-backward-linear", KERNELS + "activation.py",
           "lambda xp, x, y, dy: dy * (1 - y * y))", "lambda xp, x, y, dy: dy * (1 - y))",
           function_tests("Tanh"), "tanh's derivative 1 - y"),
    Mutant("gelu-erf-backward", KERNELS + "activation.py",
           "    t = xp.tanh(SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x))\n    # In place",
           GELU_ERF + "\n    # In place", function_tests("GELU"),
           "GELU backward: the exact erf derivative while forward is the tanh form (~2e-3)"),
    Mutant("sin-backward-scaled", KERNELS + "math.py",
           "lambda xp, x, y, dy: dy * xp.cos(x))", "lambda xp, x, y, dy: dy * xp.cos(x) * 1.001)",
           function_tests("Sin"), "sin's derivative off by 0.1%"),
    Mutant("log-backward-shifted", KERNELS + "math.py",
           "lambda xp, x, y, dy: dy / x)", "lambda xp, x, y, dy: dy / (x + 1e-3))",
           function_tests("Log"), "log's derivative 1 / (x + 1e-3)"),
    Mutant("div2-backward-divisor", KERNELS + "arithmetic.py",
           "g1 = -dy * x0 / (x1 * x1) if pd[1] else None",
           "g1 = -dy * x0 / x1 if pd[1] else None", function_tests("Div2"),
           "d(x0/x1)/dx1 = -x0 / x1"),
    Mutant("mul2-backward-swapped", KERNELS + "arithmetic.py",
           "return (dy * x1 if pd[0] else None), (dy * x0 if pd[1] else None)",
           "return (dy * x1 if pd[0] else None), (dy * x1 if pd[1] else None)",
           function_tests("Mul2"), "d(x0 x1)/dx1 = x1"),
    Mutant("pow2-backward-exponent", KERNELS + "arithmetic.py",
           "g0 = dy * x1 * xp.power(x0, x1 - 1) if pd[0] else None",
           "g0 = dy * x1 * xp.power(x0, x1) if pd[0] else None", function_tests("Pow2"),
           "d(x0^x1)/dx0 = x1 x0^x1"),
    Mutant("affine-bias-mean", KERNELS + "neural_network.py",
           "grads[2] = dy.sum(axis=0).reshape(self.in_shapes[2])",
           "grads[2] = dy.mean(axis=0).reshape(self.in_shapes[2])", function_tests("Affine"),
           "affine's bias gradient averaged over the batch"),
    Mutant("mean-backward-count", KERNELS + "reduction.py",
           "g = g * (1.0 / self.count) if self.count else g",
           "g = g * (1.0 / (self.count + 1)) if self.count else g", function_tests("Mean"),
           "mean's gradient divided by n + 1"),
    Mutant("softmax-backward-no-sum", KERNELS + "activation.py",
           "return [y * (dy - (dy * y).sum(axis=self.axis, keepdims=True))]",
           "return [y * (dy - (dy * y).sum(axis=-1, keepdims=True))]",
           function_tests("Softmax"), "softmax backward reduces over the last axis"),
    Mutant("softmax-ce-backward-scaled", KERNELS + "loss.py",
           "        g -= hot\n", "        g -= 0.999 * hot\n",
           function_tests("SoftmaxCrossEntropy"), "softmax cross-entropy gradient p - 0.999 t"),
    Mutant("conv-pad-reversed", KERNELS + "native.py",
           "return (list(g.in_shape), list(g.out_shape), list(g.kernel), list(g.pad),\n"
           "            list(g.stride), list(g.dilation))",
           "return (list(g.in_shape), list(g.out_shape), list(g.kernel), list(g.pad)[::-1],\n"
           "            list(g.stride), list(g.dilation))",
           ("tests/functions/test_native.py", "tests/functions/test_kernels.py",
            "tests/functions/test_functions.py", "-k", "onvolution"),
           "the native convolution gets the pads in reverse order"),
    Mutant("bn-running-variance-biased", KERNELS + "normalization.py",
           "rv += (1 - d) * var * (n / max(n - 1, 1))", "rv += (1 - d) * var",
           BN_TESTS, "running variance without the n / (n - 1) correction"),
    Mutant("bn-running-variance-eps", KERNELS + "normalization.py",
           "rv += (1 - d) * var * (n / max(n - 1, 1))",
           "rv += (1 - d) * (var * (n / max(n - 1, 1)) + self.eps)",
           BN_TESTS, "eps added to the running variance"),
    Mutant("bn-decay-swapped", KERNELS + "normalization.py",
           "            rm *= d\n            rm += (1 - d) * mean",
           "            rm *= 1 - d\n            rm += d * mean",
           BN_TESTS, "running mean weights swapped"),
    Mutant("bn-default-decay", "nnabla_core/_spec/normalization.py",
           'Arg("decay_rate", "float", 0.9), EPS,', 'Arg("decay_rate", "float", 0.99), EPS,',
           BN_TESTS, "the spec's default decay_rate 0.99"),
    # --------------------------------------------------------------- solvers
    Mutant("sgdw-lr-ratio", SOLVERS, 'decay = (lr / hp["init_lr"]) * hp["weight_decay_rate"]',
           'decay = hp["weight_decay_rate"]', SOLVER_TESTS,
           "SgdW's decay ignores lr / init_lr (nnabla 0.75, mutant 0.5)"),
    Mutant("adamw-lr-ratio", SOLVERS, 'p[...] = p - step - eta_t * hp["weight_decay_rate"] * p',
           'p[...] = p - step - hp["weight_decay_rate"] * p', SOLVER_TESTS,
           "AdamW's decay ignores alpha / init_alpha"),
    Mutant("momentum-buffer-without-lr", SOLVERS,
           'm[...] = hp["momentum"] * m + hp["lr"] * g\n    p[...] = p - m',
           'm[...] = hp["momentum"] * m + g\n    p[...] = p - hp["lr"] * m', SOLVER_TESTS,
           "Momentum's buffer without the learning rate (differs once lr changes)"),
    Mutant("adam-eps-inside-sqrt", SOLVERS, 'denom = xp.sqrt(v)\n    denom += hp["eps"]',
           'denom = xp.sqrt(v + hp["eps"])', SOLVER_TESTS, "Adam's eps inside the sqrt"),
    Mutant("adam-bias-correction-t+1", SOLVERS,
           "step = _adam_alpha_t(hp, t) * m\n    denom",
           "step = _adam_alpha_t(hp, t + 1) * m\n    denom", SOLVER_TESTS,
           "Adam's bias correction at t+1"),
    Mutant("adagrad-eps-inside-sqrt", SOLVERS,
           'p[...] = p - hp["lr"] * g / (xp.sqrt(v) + hp["eps"])',
           'p[...] = p - hp["lr"] * g / xp.sqrt(v + hp["eps"])', SOLVER_TESTS,
           "Adagrad's eps inside the sqrt"),
    Mutant("rmsprop-decay-swapped", SOLVERS, "v[...] = v * decay + g * g * (1 - decay)",
           "v[...] = v * (1 - decay) + g * g * decay", SOLVER_TESTS, "RMSprop's decay swapped"),
    Mutant("lars-no-fused-decay", SOLVERS, "g[...] = g + wd * p  # fused decay",
           "g[...] = g  # fused decay", SOLVER_TESTS, "Lars drops its fused weight decay"),
    Mutant("amsbound-adabound-upper", SOLVERS,
           'upper = final_lr * (1 + 1 / hp["gamma"] * _f32(t))',
           'upper = final_lr * (1 + 1 / (hp["gamma"] * _f32(t)))', SOLVER_TESTS,
           "AMSBound's upper bound written as AdaBound's (nnabla's differs)"),
    Mutant("clip-grows-too", SOLVERS,
           "if sum_sq > 0 and sum_sq > clip_norm * clip_norm:", "if sum_sq > 0:", SOLVER_TESTS,
           "clip_grad_by_norm also scales small gradients up"),
    Mutant("clip-unsquared-norm", SOLVERS, "g[...] = clip_norm * g / xp.sqrt(sum_sq)",
           "g[...] = clip_norm * g / sum_sq", SOLVER_TESTS, "clip_grad_by_norm by |g|^2"),
    Mutant("clip-norm-plus-eps", SOLVERS, "g[...] = clip_norm * g / xp.sqrt(sum_sq)",
           "g[...] = clip_norm * g / (xp.sqrt(sum_sq) + 1e-3)", SOLVER_TESTS,
           "clip_grad_by_norm by |g| + 1e-3"),
    Mutant("weight-decay-on-gradient", SOLVERS, "g += p * xp.float32(rate)",
           "g += g * xp.float32(rate)", SOLVER_TESTS, "weight_decay adds rate * g"),
    # --------------------------------------------------------------- engine
    Mutant("engine-accumulate-overwrites", "nnabla_core/_execute.py",
           "if add and (grad.heads or grad.fill_value not in (None, 0)):",
           "if False and (grad.heads or grad.fill_value not in (None, 0)):", ENGINE_TESTS,
           "gradients overwrite instead of accumulating"),
    Mutant("need-grad-ignores-stop", GRAPH,
           "eff[id(n)] = any_in if n.stop is None else not n.stop", "eff[id(n)] = any_in",
           ENGINE_TESTS, "an intermediate's explicit need_grad is overridden by propagation"),
    Mutant("need-grad-through-non-differentiable", GRAPH,
           "any_in = any_in and f.spec.differentiable if not f.python else any_in",
           "any_in = any_in if not f.python else any_in", ENGINE_TESTS,
           "need_grad propagates through non-differentiable functions",
           equivalent="the backward plan skips non-differentiable functions anyway "
                      "(_backward_steps checks spec.differentiable): only an unused gradient "
                      "of their output gets computed"),
    Mutant("clear-no-need-grad-clears-backward-reads", GRAPH,
           "        needed |= plan.backward_reads()\n", "        needed |= set()\n",
           ENGINE_TESTS, "clear_no_need_grad also clears data a backward step reads"),
    Mutant("clear-buffer-clears-persistent", GRAPH,
           "if n.parent is None or n.persistent or key in roots or key in kept:",
           "if n.parent is None or key in roots or key in kept:", ENGINE_TESTS,
           "forward(clear_buffer=True) clears persistent variables"),
    Mutant("backward-clear-ignores-kept-inputs", GRAPH,
           "        if any(g is not None and _keeps_inputs(g) for g in (r() for r in n.refs)):\n"
           "            continue\n", "", ENGINE_TESTS,
           "backward(clear_buffer=True) clears inputs another function keeps"),
]


def export_tree(destination):
    """The committed tree (``git archive HEAD``) under ``destination``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")


def make_importable(copy):
    """An overlay directory that imports ``nnabla`` and ``nnabla_ext.cpu`` from ``copy``."""
    probe = ("import importlib.util; "
             "print(importlib.util.find_spec('nnabla_ext.cpu._native').origin)")
    native = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                            text=True).stdout.strip()
    package = copy / "plugins" / "nnabla_ext_cpu" / "nnabla_ext" / "cpu"
    shutil.copy2(native, package / pathlib.Path(native).name)
    overlay = copy / "_overlay"
    (overlay / "nnabla_ext").mkdir(parents=True)
    (overlay / "nnabla").symlink_to(copy / "nnabla_core")
    (overlay / "nnabla_ext" / "cpu").symlink_to(package)
    # scikit-build's editable install puts a finder for nnabla_ext.cpu ahead of sys.path.
    (overlay / "sitecustomize.py").write_text(
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path\n"
        "                    if type(f).__name__ != 'ScikitBuildRedirectingFinder']\n")
    env = {**os.environ, "PYTHONPATH": str(overlay)}
    check = ("import nnabla, nnabla_ext.cpu, nnabla_ext.cpu._native as n; "
             "print(nnabla.__file__); print(nnabla_ext.cpu.__file__); print(n.__file__)")
    files = subprocess.run([sys.executable, "-c", check], env=env, check=True,
                           capture_output=True, text=True, cwd=copy).stdout.split()
    outside = [f for f in files if not f.startswith(str(overlay))]
    if outside:
        sys.exit(f"mutants: the copy is not the one imported: {outside}")
    return env


def run_tests(copy, env, tests):
    """(return code, seconds, last summary line) of pytest over ``tests`` in the copy."""
    start = time.monotonic()
    try:
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p",
                              "no:cacheprovider", *tests], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start, f"timeout after {TIMEOUT} s"
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    return out.returncode, time.monotonic() - start, lines[-1] if lines else out.stderr[-200:]


def run_mutant(copy, env, mutant):
    path = copy / mutant.path
    original = path.read_text()
    if original.count(mutant.old) != 1:
        return "stale", 0.0, f"text found {original.count(mutant.old)} times"
    if mutant.equivalent:
        return "equivalent", 0.0, mutant.equivalent
    path.write_text(original.replace(mutant.old, mutant.new))
    try:
        code, seconds, summary = run_tests(copy, env, mutant.tests)
    finally:
        path.write_text(original)
    status = "survived" if code == 0 else "killed" if code == 1 else "killed (error)"
    return status, seconds, summary


def report(rows, commit):
    killed = sum(status.startswith("killed") for _, status, _, _ in rows)
    counted = sum(status != "equivalent" for _, status, _, _ in rows)
    lines = ["# Mutation run (tools/mutants.py)", "",
             f"Commit {commit[:10]}: killed {killed} of {counted} mutants "
             f"({100 * killed / max(counted, 1):.0f}%), "
             f"{len(rows) - counted} equivalent (explained, not run). Each mutant is one "
             "semantic change applied to an exported copy of the commit; `tests` is the summary "
             "line of its targeted tests (pytest -x), or why an equivalent mutant cannot be "
             "told apart.", "",
             "| mutant | what | result | tests | s |", "| --- | --- | --- | --- | ---: |"]
    for mutant, status, seconds, summary in rows:
        lines.append(f"| `{mutant.id}` | {mutant.what} | {status} | {summary} | "
                     f"{seconds:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run only these mutants")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--report", type=pathlib.Path, help="also write the report here")
    args = parser.parse_args(argv)
    if args.list:
        for m in MUTANTS:
            print(f"{m.id:32s} {m.path}: {m.what}")
        return 0
    unknown = set(args.only or ()) - {m.id for m in MUTANTS}
    if unknown:
        parser.error(f"unknown mutants: {sorted(unknown)}")
    selected = [m for m in MUTANTS if not args.only or m.id in args.only]
    with tempfile.TemporaryDirectory(prefix="nnabla-mutants-") as tmp:
        copy = pathlib.Path(tmp)
        export_tree(copy)
        env = make_importable(copy)
        baseline = sorted({t for m in selected for t in m.tests if t.startswith("tests/")})
        code, seconds, summary = run_tests(copy, env, baseline)
        print(f"baseline ({len(baseline)} test files, {seconds:.0f} s): {summary}",
              file=sys.stderr)
        if code != 0:
            return 2
        rows = []
        for mutant in selected:
            rows.append((mutant, *run_mutant(copy, env, mutant)))
            print(f"{mutant.id}: {rows[-1][1]} ({rows[-1][2]:.0f} s)", file=sys.stderr)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    text = report(rows, commit)
    print(text)
    if args.report:
        fd, name = tempfile.mkstemp(dir=args.report.parent, prefix=args.report.name + ".")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(name, 0o644)
        os.replace(name, args.report)
    return 0 if all(status.startswith("killed") or status == "equivalent"
                    for _, status, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
