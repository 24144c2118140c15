"""Record values from real nnabla 1.39 into ``tests/data/`` for the test suite.

CI has no nnabla, so the numbers the tests compare against are recorded once with this script
and committed. Run it with an interpreter that has nnabla 1.39.0 installed (Python 3.10)::

    "$NNABLA_REFERENCE_PYTHON" tools/record_nnabla_reference.py

It writes

- ``tests/data/nnabla_1.39_function_bases.tsv``: ``inspect.signature`` of every public
  function of ``nnabla.function_bases`` (the spec-generated functions, whose defaults are the
  function spec's defaults);
- ``tests/data/nnabla_1.39_recorded_values.json``: solver trajectories over a changing
  learning rate, weight decay and gradient clipping (every solver), batch normalization's
  running statistics, GELU's forward and backward, and the outputs and gradients of every
  function-case row (``nnabla_core/testing/function_cases``) of the differentiable functions
  that have no central-difference check (straight-through estimators, rounding, quantizers,
  gradient clipping, Cholesky over symmetric inputs, ...), whose backward is a convention that
  only nnabla itself can pin.

Inputs are generated here from fixed seeds and stored next to the outputs, so the tests do not
depend on regenerating them identically.
"""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
CASES = ROOT / "nnabla_core" / "testing" / "function_cases"
# Differentiable functions whose backward no case checks by central differences.
CONVENTION_GRADIENTS = (
    "Assign", "BatchCholesky", "BinarySigmoid", "BinaryTanh", "Ceil", "ClipGradByNorm",
    "ClipGradByValue", "FixedPointQuantize", "Floor", "MinMaxQuantize", "Pow2Quantize", "Prune",
    "QuantizeLinear", "Round", "Sign", "Sink", "SpectralNorm", "TopKGrad", "VATNoise")

# (solver, constructor arguments): every nnabla solver at its defaults, plus rows whose
# decoupled weight decay is large enough that its lr / init_lr scaling shows in float32.
SOLVER_ROWS = [
    ("Sgd", {}), ("Momentum", {}), ("Nesterov", {}), ("SgdW", {}), ("Lars", {}),
    ("Adadelta", {}), ("Adagrad", {}), ("RMSprop", {}), ("RMSpropGraves", {}), ("Adam", {}),
    ("AdamW", {}), ("Adamax", {}), ("AMSGRAD", {}), ("AdaBound", {}), ("AMSBound", {}),
    ("AdaBelief", {}), ("Lamb", {}), ("Lion", {}),
    ("SgdW", {"lr": 0.1, "momentum": 0.5, "wd": 0.25}),
    ("AdamW", {"alpha": 0.1, "wd": 0.25}),
    ("AdaBelief", {"alpha": 0.1, "weight_decouple": True, "wd": 0.25}),
    ("AdaBelief", {"alpha": 0.1, "weight_decouple": True, "fixed_decay": True, "wd": 0.25}),
    ("Lars", {"lr": 0.1}),
    ("Lamb", {"eta": 0.1, "bias_correction": True}),
    ("Lion", {"lr": 0.1}),
    ("AdaBound", {"alpha": 0.1}),
    # eps large enough to tell where it enters (inside or outside the square root)
    ("Adagrad", {"lr": 0.1, "eps": 0.5}), ("RMSprop", {"lr": 0.1, "eps": 0.5}),
    ("RMSpropGraves", {"lr": 0.1, "eps": 0.5}), ("Adamax", {"alpha": 0.1, "eps": 0.5}),
    ("Adam", {"alpha": 0.1, "eps": 0.5}), ("AMSGRAD", {"alpha": 0.1, "eps": 0.5}),
    ("Adadelta", {"eps": 0.5}),
    # step-size bounds that bind from the first step (nnabla's AMSBound upper bound differs)
    ("AdaBound", {"alpha": 1.0, "final_lr": 0.01, "gamma": 1.0}),
    ("AMSBound", {"alpha": 1.0, "final_lr": 0.01, "gamma": 1.0}),
    ("AMSBound", {"alpha": 1.0, "final_lr": 0.01, "gamma": 1.0, "bias_correction": True}),
]
# Per step: learning-rate factor (times the initial rate), weight_decay() rate (None: not
# called), clip_grad_by_norm() norm (None: not called).
SCHEDULE = [(1.0, None, None), (1.0, 0.01, None), (0.5, None, None), (0.5, 0.1, 2.0),
            (0.25, None, None), (2.0, 0.05, 0.5)]


def _atomic_write(path, text):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def record_function_bases():
    import nnabla
    import nnabla.function_bases as fb
    lines = [f"# recorded from nnabla {nnabla.__version__}'s nnabla.function_bases "
             "(inspect.signature): name, signature; tab-separated"]
    for name in sorted(dir(fb)):
        obj = getattr(fb, name)
        if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != fb.__name__:
            continue
        lines.append(f"{name}\t{inspect.signature(obj)}")
    return "\n".join(lines) + "\n"


def _array(a):
    return np.asarray(a, np.float64).tolist()


def record_solver(name, kwargs, seed=313):
    import nnabla as nn
    import nnabla.solvers as S
    rng = np.random.RandomState(seed)
    shapes = {"w": (2, 3), "b": (3,)}
    params = {k: nn.Variable.from_numpy_array(rng.randn(*s).astype(np.float32), need_grad=True)
              for k, s in shapes.items()}
    solver = getattr(S, name)(**kwargs)
    solver.set_parameters(params)
    lr0 = solver.learning_rate()
    row = {"solver": name, "kwargs": kwargs, "init": {k: _array(v.d) for k, v in params.items()},
           "steps": []}
    for factor, decay, clip in SCHEDULE:
        grads = {k: rng.randn(*s).astype(np.float32) for k, s in shapes.items()}
        for k, g in grads.items():
            params[k].g = g
        solver.set_learning_rate(lr0 * factor)
        if decay is not None:
            solver.weight_decay(decay)
        if clip is not None:
            solver.clip_grad_by_norm(clip)
        solver.update()
        row["steps"].append({"lr": lr0 * factor, "weight_decay": decay, "clip_grad_by_norm": clip,
                             "grads": {k: _array(g) for k, g in grads.items()},
                             "params": {k: _array(v.d) for k, v in params.items()}})
    row["states"] = {k: {"t": state.t, "pstate": {n: _array(v.d) for n, v in state.pstate.items()}}
                     for k, state in solver.get_states().items()}
    return row


def record_batch_normalization():
    import nnabla as nn
    import nnabla.function_bases as fb
    import nnabla.functions as F
    rng = np.random.RandomState(7)
    x = rng.randn(4, 3, 2).astype(np.float32) * 2 + 1
    beta, gamma = rng.randn(1, 3, 1).astype(np.float32), rng.rand(1, 3, 1).astype(np.float32) + .5
    mean, var = rng.randn(1, 3, 1).astype(np.float32), rng.rand(1, 3, 1).astype(np.float32) + .5
    rows = []
    for label, call in [
            ("F.batch_normalization eps=0.5", lambda *v: F.batch_normalization(
                *v, batch_stat=True, eps=0.5)),
            ("F.batch_normalization decay_rate=0.7", lambda *v: F.batch_normalization(
                *v, decay_rate=0.7, batch_stat=True)),
            ("function_bases.batch_normalization defaults", lambda *v: fb.batch_normalization(
                *v))]:
        vs = [nn.Variable.from_numpy_array(a.copy()) for a in (x, beta, gamma, mean, var)]
        y = call(*vs)
        y.forward()
        rows.append({"call": label, "y": _array(y.d), "running_mean": _array(vs[3].d),
                     "running_variance": _array(vs[4].d)})
    inputs = {k: _array(v) for k, v in
              dict(x=x, beta=beta, gamma=gamma, mean=mean, variance=var).items()}
    return {"inputs": inputs, "calls": rows}


def record_gelu():
    import nnabla as nn
    import nnabla.functions as F
    x = np.linspace(-5, 5, 41).astype(np.float32)
    dy = np.random.RandomState(3).randn(41).astype(np.float32)
    v = nn.Variable.from_numpy_array(x, need_grad=True)
    y = F.gelu(v)
    y.forward()
    v.grad.zero()
    y.backward(dy)
    return {"x": _array(x), "dy": _array(dy), "y": _array(y.d), "dx": _array(v.g)}


def _load_cases():
    """The case table, loaded from its files under another package name (this interpreter's
    ``nnabla`` is nnabla 1.39 itself)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "function_cases", CASES / "__init__.py", submodule_search_locations=[str(CASES)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["function_cases"] = module
    spec.loader.exec_module(module)
    return module.ALL_CASES


def run_case(case, snake, grad_inputs=None):
    """Outputs, gradients (for seeded output gradients) and the inputs after the call;
    ``grad_inputs``: the positions that need a gradient (default: every float input)."""
    import nnabla as nn
    import nnabla.function_bases as fb
    arrays = case.make_inputs()
    positions = iter(range(10 ** 6))

    def variable(a):
        i = next(positions)
        wanted = a is not None and a.dtype.kind == "f" and (grad_inputs is None
                                                             or i in grad_inputs)
        return None if a is None else nn.Variable.from_numpy_array(a.copy(), need_grad=wanted)
    xs = [[variable(a) for a in x] if isinstance(x, list) else variable(x) for x in arrays]
    flat = [v for x in xs for v in (x if isinstance(x, list) else [x])]
    # function_bases: the spec's own arguments (F.quantize_linear, e.g., wants a numpy dtype).
    args = dict(case.args)
    if case.args.get("output_u"):
        args["n_outputs"] = 2        # nnabla 1.39 segfaults when left to infer it
    ys = getattr(fb, snake)(*(xs[0] if isinstance(xs[0], list) else xs), **args)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    nn.forward_all(ys)
    outputs = [y.d.copy() for y in ys]
    for v in flat:
        if v is not None and v.need_grad:
            v.grad.zero()
    rng = np.random.RandomState(1)
    dys = [np.asarray(rng.randn(*y.shape), np.float32) for y in ys]
    for y, dy in zip(ys, dys):
        y.backward(dy)
    return {"case": str(case), "dys": [_array(d) for d in dys],
            "outputs": [_array(y) for y in outputs],
            "grads": [None if v is None or not v.need_grad else _array(v.g) for v in flat],
            "inputs_after": [None if v is None else _array(v.d) for v in flat]}


def record_convention_gradients():
    import nnabla.function_bases as fb
    rows = []
    for case in _load_cases():
        if case.name in CONVENTION_GRADIENTS:
            snake = [n for n in dir(fb) if n.replace("_", "").lower() == case.name.lower()]
            try:
                rows.append(run_case(case, snake[0]))
            except RuntimeError:       # e.g. QuantizeLinear: no gradient w.r.t. the scale
                rows.append({**run_case(case, snake[0], grad_inputs=(0,)), "grad_inputs": [0]})
    return rows


def main():
    import nnabla
    if nnabla.__version__ != "1.39.0":
        sys.exit(f"record_nnabla_reference: needs nnabla 1.39.0, found {nnabla.__version__}")
    _atomic_write(DATA / "nnabla_1.39_function_bases.tsv", record_function_bases())
    values = {"recorded_with": f"nnabla {nnabla.__version__} "
                               f"(tools/record_nnabla_reference.py)",
              "solver_schedule": [list(s) for s in SCHEDULE],
              "solvers": [record_solver(name, kwargs) for name, kwargs in SOLVER_ROWS],
              "batch_normalization": record_batch_normalization(),
              "gelu": record_gelu(),
              "convention_gradients": record_convention_gradients()}
    _atomic_write(DATA / "nnabla_1.39_recorded_values.json", json.dumps(values, indent=1) + "\n")


if __name__ == "__main__":
    main()
