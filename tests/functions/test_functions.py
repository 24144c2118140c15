"""Every Case through the engine: forward, backward, accum, modes and half precision."""
import numpy as np
import pytest

import nnabla as nn
from nnabla.testing.function_cases import ALL_CASES
from engine_harness import (compare_outputs, flatten, is_float, outputs_of, reference_outputs,
                            run_static, to_variables, call)
from kernel_harness import make_kernel
from nnabla.ext_utils import get_extension_context

WITH_REF = [c for c in ALL_CASES if c.ref is not None]
WITH_GRAD = [c for c in ALL_CASES if c.grad]


def _seeded(case):
    """Stochastic functions are only comparable under an explicit seed."""
    from nnabla._spec import SPECS
    if "seed" not in SPECS[case.name].arg_names:
        return True
    return case.args.get("seed", -1) != -1


@pytest.mark.parametrize("case", WITH_REF, ids=str)
def test_static_forward_matches_reference(case):
    arrays = case.make_inputs()
    _, ys = run_static(case, arrays)
    compare_outputs(case, [y.d for y in ys], reference_outputs(case, arrays))


@pytest.mark.parametrize("case", [c for c in ALL_CASES if _seeded(c)], ids=str)
def test_dynamic_and_imperative_modes_match_static(case):
    arrays = case.make_inputs()
    _, static = run_static(case, arrays)
    with nn.auto_forward():
        dynamic = outputs_of(call(case, to_variables(arrays)))
    nd = [[nn.NdArray.from_numpy_array(a) for a in x] if isinstance(x, list)
          else (None if x is None else nn.NdArray.from_numpy_array(x)) for x in arrays]
    from nnabla._spec import SPECS
    # A function without inputs has nothing to run imperatively on: it builds a graph.
    imperative = outputs_of(call(case, nd)) if SPECS[case.name].inputs else dynamic
    for s, d, i in zip(static, dynamic, imperative):
        np.testing.assert_array_equal(s.d, d.d)
        np.testing.assert_array_equal(s.d, i.data if isinstance(i, nn.NdArray) else i.d)


def _grads_float64(case, arrays, dys):
    kernel, xs, _ = make_kernel(case, arrays, np.float64)
    kernel.forward(xs)
    ys = kernel.forward(xs)
    pd = [is_float(x) for x in xs]
    return kernel.backward(xs, list(ys), [d.astype(np.float64) for d in dys], pd)


@pytest.mark.parametrize("case", WITH_GRAD, ids=str)
def test_backward_matches_float64_kernel_and_accumulates_on_leaves(case):
    arrays = case.make_inputs()
    xs, ys = run_static(case, arrays)
    rng = np.random.RandomState(1)
    dys = [np.asarray(rng.randn(*y.shape), np.float32) for y in ys]
    expected = _grads_float64(case, arrays, dys)
    leaves = flatten(xs)
    for v in leaves:
        if v is not None and v.need_grad:
            v.g = 0.5                       # leaves accumulate into what is there
    for y, dy in zip(ys, dys):
        y.g = dy
    nn.forward_all(ys)
    # Backward from a sink of all outputs so every dy is used.
    total = ys[0] if len(ys) == 1 else None
    if total is not None:
        total.backward(dys[0])
    else:
        for y, dy in zip(ys, dys):
            y.backward(dy)
    for i, v in enumerate(leaves):
        if v is None or not v.need_grad or (case.grad_inputs and i not in case.grad_inputs):
            continue
        if expected[i] is None:
            continue
        np.testing.assert_allclose(v.g, expected[i] + 0.5, atol=case.grad_atol * 5,
                                   rtol=case.grad_rtol, err_msg=f"{case}: grad of input {i}")


@pytest.mark.parametrize("case", [c for c in WITH_REF if _seeded(c)], ids=str)
def test_half_matches_float(case):
    arrays = case.make_inputs()
    _, ys = run_static(case, arrays)
    with nn.context_scope(get_extension_context("cpu", type_config="half")):
        _, hs = run_static(case, arrays)
    for i, (y, h) in enumerate(zip(ys, hs)):
        if case.check_outputs is not None and i not in case.check_outputs:
            continue
        ref = y.d.astype(np.float64)
        scale = max(1.0, float(np.abs(ref).max())) if ref.size else 1.0
        if h.d.dtype.kind == "f":
            assert h.d.dtype == np.float16 or y.d.dtype != np.float32
        np.testing.assert_allclose(h.d.astype(np.float64), ref, atol=case.half_atol * scale,
                                   rtol=case.half_atol, err_msg=f"{case}: output {i}")
