"""Run every function case on real nnabla 1.39 (a script for the reference interpreter).

``test_differential_nnabla.py`` runs this file with the interpreter named by
``NNABLA_REFERENCE_PYTHON`` (Python 3.10 with nnabla 1.39 installed)::

    "$NNABLA_REFERENCE_PYTHON" tests/functions/nnabla_reference_runner.py OUT.npz COUNTS.json

For each row of the case table (``nnabla_core/testing/function_cases``, loaded from its files
under another package name, since ``nnabla`` here is nnabla itself) it calls
``nnabla.function_bases.<name>`` on the row's inputs (with ``n_outputs`` from
``COUNTS.json``, ``{case: number of outputs}``, which nnabla cannot always infer), runs
forward and, for differentiable rows, backward from output gradients drawn with
``RandomState(1)``, and stores outputs and input gradients in ``OUT.npz`` (keys
``<case>/output/<i>``, ``<case>/grad/<i>``). Rows that nnabla refuses, or that crash it (each
row runs in a forked child), are listed with the reason in ``OUT.npz.json``.
"""
import importlib.util
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

CASES = pathlib.Path(__file__).resolve().parents[2] / "nnabla_core" / "testing" / "function_cases"
PARTIAL_GRADIENTS = "gradients of inputs other than 0"


def load_cases():
    spec = importlib.util.spec_from_file_location(
        "function_cases", CASES / "__init__.py", submodule_search_locations=[str(CASES)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["function_cases"] = module
    spec.loader.exec_module(module)
    return module.ALL_CASES


def snake_name(fb, case):
    names = [n for n in dir(fb) if n.replace("_", "").lower() == case.name.lower()]
    if not names:
        raise LookupError(f"nnabla.function_bases has no function for {case.name}")
    return names[0]


def run(case, n_outputs, grad_inputs=None):
    """{key: array} of one case; ``grad_inputs``: flat positions that need a gradient."""
    import nnabla as nn
    import nnabla.function_bases as fb
    arrays, position = case.make_inputs(), iter(range(10 ** 6))

    def variable(a):
        i = next(position)
        wanted = (case.grad and a is not None and a.dtype.kind == "f"
                  and (grad_inputs is None or i in grad_inputs))
        return None if a is None else nn.Variable.from_numpy_array(a.copy(), need_grad=wanted)
    xs = [[variable(a) for a in x] if isinstance(x, list) else variable(x) for x in arrays]
    flat = [v for x in xs for v in (x if isinstance(x, list) else [x])]
    args = {**case.args, "n_outputs": n_outputs}
    inputs = xs[0] if xs and isinstance(xs[0], list) else xs
    ys = getattr(fb, snake_name(fb, case))(*inputs, **args)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    nn.forward_all(ys)
    result = {f"{case}/output/{i}": y.d.copy() for i, y in enumerate(ys)}
    if case.grad:
        for v in flat:
            if v is not None and v.need_grad:
                v.grad.zero()
        rng = np.random.RandomState(1)
        for y in ys:
            y.g = np.asarray(rng.randn(*y.shape), np.float32)
        # One backward from a sink that keeps the outputs' gradients: a backward per output
        # would run a multi-output function's backward again with the others' dy still set.
        sink = fb.sink(*ys, one_input_grad=False)
        sink.forward()
        sink.backward()
        result.update({f"{case}/grad/{i}": v.g.copy() for i, v in enumerate(flat)
                       if v is not None and v.need_grad})
    return result


def run_or_refuse(case, n_outputs):
    """(results, None) or (partial results, why nnabla refused part of the row)."""
    try:
        return run(case, n_outputs, case.grad_inputs), None
    except Exception as error:   # nnabla refuses the row: record why
        if case.grad:
            try:                 # e.g. no gradient w.r.t. a scale: first input only
                return run(case, n_outputs, (0,)), f"{PARTIAL_GRADIENTS}: {error}"
            except Exception:
                pass
        return {}, f"{type(error).__name__}: {error}"


def main(out, counts):
    import nnabla  # noqa: F401 - imported once, before the per-case forks
    counts = json.loads(pathlib.Path(counts).read_text())
    results, refused = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, case in enumerate(load_cases()):
            # A forked child per row: some rows crash nnabla 1.39 (segmentation faults).
            path = os.path.join(tmp, f"{index}.npz")
            pid = os.fork()
            if pid == 0:
                values, why = run_or_refuse(case, counts[str(case)])
                np.savez(path, **values)
                pathlib.Path(path + ".json").write_text(json.dumps(why))
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status) or not os.path.exists(path + ".json"):
                refused[str(case)] = f"nnabla 1.39 crashed (wait status {status})"
                continue
            why = json.loads(pathlib.Path(path + ".json").read_text())
            if why:
                refused[str(case)] = why
            with np.load(path) as data:
                results.update({key: data[key] for key in data.files})
    fd, tmp_out = tempfile.mkstemp(dir=os.path.dirname(out), suffix=".npz")
    os.close(fd)
    np.savez(tmp_out, **results)
    os.replace(tmp_out, out)
    pathlib.Path(out + ".json").write_text(json.dumps(refused, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
