"""Differential test: every function case on real nnabla 1.39 and here, compared.

Outside the default suite: it needs an interpreter with nnabla 1.39 installed (Python 3.10),
named by the environment variable ``NNABLA_REFERENCE_PYTHON``; without it the module is
skipped, saying so. ``nnabla_reference_runner.py`` runs the case table there once per session;
each row then runs here through ``nnabla.function_bases`` with the same inputs and output
gradients (one backward from a sink that keeps them). Outputs are compared at the row's forward
tolerances, gradients at 1e-4 relative (both sides compute in float32). Rows nnabla refuses or
crashes on and random functions (their generators differ) are skipped with the reason; the
values of the deliberate differences (README, ``DELIBERATE`` here) are not compared.

    NNABLA_REFERENCE_PYTHON=/path/to/python3.10 pytest tests/functions/test_differential_nnabla.py
"""
import json
import os
import pathlib
import subprocess

import nnabla as nn
import nnabla.function_bases as fb
import numpy as np
import pytest

from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla.testing.function_cases import ALL_CASES

REFERENCE = os.environ.get("NNABLA_REFERENCE_PYTHON")
WHY_NOT = ("differential test against nnabla 1.39: set NNABLA_REFERENCE_PYTHON to a Python 3.10 "
           "interpreter that has nnabla 1.39 installed")
RUNNER = pathlib.Path(__file__).resolve().with_name("nnabla_reference_runner.py")
PARTIAL_GRADIENTS = "gradients of inputs other than 0"
# Values of nnabla's that are wrong (README, "Deliberate differences"; each is tested in
# test_deliberate_differences.py): case -> (the keys not compared, why).
# Keys are "output", "grad" (all of that kind) or "grad/<input>".
SORT = (("grad",), "nnabla 1.39 applies the inverse permutation to the gradient")
DELIBERATE = {
    "SpectralNorm-test-output-u": (("grad",), "nnabla 1.39's test-mode gradient is NaN"),
    "Sort": SORT,
    "Sort-reverse": SORT,
    "PadPackedSequence-batch-first-total-length": (
        ("output",), "nnabla 1.39 ignores padding_value and pads 0"),
    "AffineGrid-single-row": (("output", "grad"), "nnabla 1.39 gives NaN on a size-1 axis"),
    "Prod-zeros": (("grad",), "nnabla 1.39 gives 0 for the gradient of a row's only zero"),
    "FusedConvolution-bn-inference-elu": (
        ("grad/5", "grad/6"), "nnabla 1.39 gives no gradient to the running statistics"),
}


def _output_count(case):
    spec = SPECS[case.name]
    arrays = case.make_inputs()
    flat = list(arrays[0]) if spec.variadic_input else list(arrays)
    shapes = [None if a is None else tuple(a.shape) for a in flat]
    return len(infer(spec, shapes, bind_args(spec, case.args))[1])


@pytest.fixture(scope="session")
def nnabla_results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nnabla")
    out, counts = folder / "results.npz", folder / "counts.json"
    counts.write_text(json.dumps({str(c): _output_count(c) for c in ALL_CASES}))
    run = subprocess.run([REFERENCE, str(RUNNER), str(out), str(counts)], capture_output=True,
                         text=True)
    assert run.returncode == 0, f"the reference runner failed:\n{run.stderr[-3000:]}"
    refused = json.loads(pathlib.Path(str(out) + ".json").read_text())
    with np.load(out) as data:
        return {key: data[key] for key in data.files}, refused


def _ours(case, grad_inputs):
    arrays, position = case.make_inputs(), iter(range(10 ** 6))

    def variable(a):
        i = next(position)
        wanted = (case.grad and a is not None and a.dtype.kind == "f"
                  and (grad_inputs is None or i in grad_inputs))
        return None if a is None else nn.Variable.from_numpy_array(a.copy(), need_grad=wanted)
    xs = [[variable(a) for a in x] if isinstance(x, list) else variable(x) for x in arrays]
    flat = [v for x in xs for v in (x if isinstance(x, list) else [x])]
    inputs = xs[0] if xs and isinstance(xs[0], list) else xs
    ys = getattr(fb, SPECS[case.name].snake)(*inputs, **case.args)
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


def _deterministic(case):
    return not SPECS[case.name].stochastic


# Without the reference interpreter: one test that skips, saying why (not 547).
@pytest.mark.parametrize("case", ALL_CASES if REFERENCE else [None], ids=str)
def test_function_case_matches_nnabla(case, request):
    if case is None:
        pytest.skip(WHY_NOT)
    theirs, refused = request.getfixturevalue("nnabla_results")
    if not _deterministic(case):
        pytest.skip("random function: nnabla's generator differs from ours")
    reason = refused.get(str(case), "")
    if reason and not reason.startswith(PARTIAL_GRADIENTS):
        pytest.skip(f"nnabla 1.39 refuses this row: {reason}")
    ours = _ours(case, (0,) if reason else case.grad_inputs)
    assert sorted(ours) == sorted(k for k in theirs if k.startswith(f"{case}/"))
    skipped, _ = DELIBERATE.get(str(case), ((), None))
    for key, value in ours.items():
        _, kind, position = key.rsplit("/", 2)
        if kind in skipped or f"{kind}/{position}" in skipped:
            continue
        if case.check_outputs is not None and "/output/" in key \
                and int(key.rsplit("/", 1)[1]) not in case.check_outputs:
            continue
        atol, rtol = (case.atol, case.rtol) if "/output/" in key else (1e-5, 1e-4)
        np.testing.assert_allclose(value, theirs[key], atol=atol, rtol=rtol, err_msg=key)
