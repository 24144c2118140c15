"""Every Case through the engine: forward, backward, accum, modes and half precision."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.testing.function_cases import ALL_CASES, Case
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
        if expected[i] is None:          # the kernel gives no gradient: nothing is added
            np.testing.assert_array_equal(v.g, 0.5, err_msg=f"{case}: grad of input {i}")
            continue
        # Consistency (the same kernel in float32 and float64), not the correctness check:
        # that is test_kernels.py's central differences.
        np.testing.assert_allclose(v.g, expected[i] + 0.5, atol=1e-4, rtol=1e-4,
                                   err_msg=f"{case}: grad of input {i}")


def _assert_half_close(case, half, full, what):
    """|half - float| <= half_rtol (|float| + floor) per element; the floor, a fraction
    (``half_floor_ratio``) of the largest |float|, absorbs cancellation next to zero."""
    full = np.asarray(full, np.float64)
    floor = case.half_floor_ratio * (float(np.abs(full).max()) if full.size else 0.0)
    error = np.abs(np.asarray(half, np.float64) - full)
    bound = case.half_rtol * (np.abs(full) + floor)
    worst = np.unravel_index(np.argmax(error - bound), error.shape) if error.size else ()
    assert (error <= bound).all(), (
        f"{case}: {what}: half {np.asarray(half)[worst]} vs float {full[worst]} at {worst}: "
        f"error {error[worst]:.3g} > {bound[worst]:.3g} (half_rtol={case.half_rtol}, "
        f"floor={floor:.3g})")


def _half_and_float(case, arrays, backward):
    """Outputs (and the leaves' gradients for a fixed dy) in float (the current context: the
    ``--backend`` one) and in the CPU's half."""
    results = []
    for context in (nn.get_current_context(), get_extension_context("cpu", type_config="half")):
        with nn.context_scope(context):
            xs, ys = run_static(case, arrays)
            grads = []
            if backward:
                rng = np.random.RandomState(1)
                for v in flatten(xs):
                    if v is not None and v.need_grad:
                        v.grad.zero()
                for y in ys:
                    y.backward(np.asarray(rng.randn(*y.shape), np.float32))
                grads = [None if v is None or not v.need_grad else v.g.copy()
                         for v in flatten(xs)]
            results.append(([y.d.copy() for y in ys], grads))
    return results


@pytest.mark.parametrize("case", [c for c in WITH_REF if _seeded(c) and c.half], ids=str)
def test_half_matches_float_element_by_element(case):
    arrays = case.make_inputs()
    (ys, gs), (hs, hgs) = _half_and_float(case, arrays, backward=case.grad)
    for i, (y, h) in enumerate(zip(ys, hs)):
        if case.check_outputs is not None and i not in case.check_outputs:
            continue
        if h.dtype.kind == "f":
            assert h.dtype == np.float16 or y.dtype != np.float32
        _assert_half_close(case, h, y, f"output {i}")
    for i, (g, hg) in enumerate(zip(gs, hgs)):
        if g is not None and (case.grad_inputs is None or i in case.grad_inputs):
            _assert_half_close(case, hg, g, f"gradient of input {i}")


def test_half_equal_scalar_compares_the_input_rounded_to_half():
    # The case EqualScalar-float32-val skips the half comparison for this reason.
    x = np.array([0.1, 0.2, 1.0], np.float32)
    with nn.context_scope(get_extension_context("cpu", type_config="half")):
        y = F.equal_scalar(nn.Variable.from_numpy_array(x), 0.1)
        y.forward()
    np.testing.assert_array_equal(y.d, [0, 0, 0])
    assert np.float16(0.1).astype(np.float64) != 0.1    # the value half reads for x[0]


def test_every_loose_tolerance_states_its_reason():
    defaults = Case("ReLU", [])
    loose = [c for c in ALL_CASES
             if c.fd_atol > defaults.fd_atol or c.fd_rtol > defaults.fd_rtol
             or c.half_rtol > defaults.half_rtol
             or c.half_floor_ratio > defaults.half_floor_ratio or not c.half]
    assert [str(c) for c in loose if not c.why_loose] == []
