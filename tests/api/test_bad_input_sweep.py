"""A systematic bad-input sweep of the public entry points (issue 7, "bad input is never
silent"): every ``nnabla.functions`` function, every ``nnabla.parametric_functions`` layer,
every solver and its methods, ``nn.Variable``/``nn.NdArray``, ``nn.grad``, the parameter
helpers, the data iterators and the monitors.

Each entry point starts from a call that works; then one argument at a time gets one of the
classic mistakes (None, a str where a number or an array belongs, a list or a numpy array where
a Variable belongs, a fractional float where an int belongs, a negative count, a tuple of the
wrong length); the calls are listed in ``bad_input_sweep_calls.py``. Each mistake has an
expectation:

- ``RAISE``: the call must raise TypeError or ValueError (a RuntimeError where nnabla raises
  one; our argument errors are both ValueError and RuntimeError) whose message names the
  entry point and the argument;
- ``EITHER``: the call may succeed (then running the graph must work too) or raise as above.

For ``F``, ``PF`` and ``S`` the expectation follows nnabla 1.39's recorded answer to the same
call (``tests/data/bad_input_sweep_nnabla_1.39.tsv``, ``tools/record_bad_input_sweep.py``):
what nnabla refuses must raise (in whatever way nnabla refused it, even by an internal error);
what it accepts may succeed, except the mistakes we refuse on purpose (below). Where nnabla
1.39 fails the working call itself (its CPU has no FFT; sync_batch_normalization needs a
communicator) the expectation is ours alone.

Never an AttributeError, IndexError, KeyError, ZeroDivisionError, OverflowError, a message
about ``'NoneType'``, an error raised inside numpy, a hang or a crash; and a failed call
changes no state: the parameter registry (names and variables), the parameter scope, the
current and default contexts and the auto-forward flag are as before.

Where we are stricter than nnabla 1.39, on purpose (``STRICT``): a float with a fraction where
an int belongs (nnabla truncates ``axis=1.5`` to 1 silently), a dict or nested tuples for a
tuple of ints, a str for a bool (nnabla takes its truth value) and a negative size (nnabla
makes a variable of shape ``(-1,)``) raise. An integral float (``2.0``) is accepted, as nnabla
does.

Entry points are checked one test per entry point, every mistake of it in a loop, and the
failures listed together, so the sweep stays fast (a few seconds).
"""
from __future__ import annotations

import inspect
import pathlib

import pytest
from bad_input_sweep_calls import (EITHER, F_NAMES, F_NOT_SWEPT, PF_NAMES, PF_NOT_SWEPT, RAISE,
                                   SOLVER_NAMES, STRICT, function_calls, judge, pf_calls,
                                   report, solver_calls, watchdog)

from nnabla._spec import BY_SNAKE

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
_watchdog = pytest.fixture(autouse=True)(watchdog)
# --- F, PF and S, with nnabla 1.39's answers ------------------------------------------------

def _nnabla_answers():
    path = DATA / "bad_input_sweep_nnabla_1.39.tsv"
    lines = path.read_text().splitlines()
    return dict(line.split("\t") for line in lines if line and not line.startswith("#"))


NNABLA = _nnabla_answers()
# Accepted sizes that are harmless however nnabla treats them (it may refuse 2.0 in some
# Python paths, e.g. range(2.0)); and mistakes whose label says nothing about nnabla.
ALWAYS_EITHER = ("an integral float", "integral floats")


# Calls nnabla 1.39 refuses that work here on purpose, and why.
SUPERSET = {
    **{f"F.{f} kernel=one value less": "1-D pooling works here; nnabla 1.39 has not "
       "implemented it (a not_implemented error)" for f in ("max_pooling", "average_pooling",
                                                            "sum_pooling")},
    "F.scatter_add indices=a numpy array": "indices may be array-likes of ints, as "
    "F.gather_nd and F.scatter_nd document",
    "PF.fused_batch_normalization axes=negative values": "a negative axis counts from the "
    "end, as in PF.batch_normalization (nnabla 1.39's fused layer makes beta and gamma of "
    "the wrong shape for it and fails)",
    "PF.fused_batch_normalization axes=one value less": "no axes: statistics over every "
    "axis, as PF.batch_normalization computes them (nnabla 1.39's fused layer asserts)",
}
# nnabla 1.39 died or hung: its answer says nothing about the input.
NO_ANSWER = ("crash", "timeout")


def _random(call):
    """A random function: nnabla 1.39's answer may depend on the numbers it drew
    (random_choice without replacement fails now and then)."""
    spec = BY_SNAKE.get(call.name) if call.module == "F" else None
    return spec is not None and spec.stochastic


def _expectation(call):
    label = call.key.partition("=")[2]
    answer = NNABLA.get(call.key)
    if call.key in SUPERSET:
        return EITHER
    if NNABLA.get(call.api) != "ok" or label in ALWAYS_EITHER or answer in NO_ANSWER or \
            _random(call):
        return call.expect
    if answer == "ok":
        return RAISE if call.expect == RAISE and label in STRICT else EITHER
    return RAISE


def _sweep(calls):
    working, *mistakes = calls
    missing = [c.key for c in calls if c.key not in NNABLA]
    assert not missing, (f"calls without nnabla 1.39's answer (run "
                         f"tools/record_bad_input_sweep.py): {missing[:5]}")
    names = set(working.kwargs) | set(inspect.signature(working.function()).parameters)
    spec = BY_SNAKE.get(working.name) if working.module == "F" else None
    if spec is not None:        # the function table's names (mean_subtraction's rmean)
        names |= set(spec.input_names) | set(spec.arg_names)
    why = judge(working.api, None, working, EITHER)
    assert why is None, f"the working call {working.key} fails: {why}"
    failures = []
    for call in mistakes:
        why = judge(call.api, call.argument, call, _expectation(call), names=names,
                     argument_label=call.key.partition("=")[2])
        if why:
            failures.append((f"{call.key} [nnabla: {NNABLA[call.key]}]", why))
    report(failures)


@pytest.mark.parametrize("snake", F_NAMES)
def test_functions(snake):
    _sweep(function_calls(snake))


@pytest.mark.parametrize("snake", F_NAMES)
def test_functions_on_ndarrays(snake):
    """The same calls in imperative mode (NdArray inputs run at once, through the
    wrappers' fast path once a call of the same shapes and arguments has run)."""
    _sweep(function_calls(snake, imperative=True))


@pytest.mark.parametrize("name", PF_NAMES)
def test_parametric_functions(name):
    _sweep(pf_calls(name))


@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_solver_constructors(name):
    _sweep(solver_calls(name))


def _recorded_members(module):
    return {line.split("\t")[1] for line in (DATA / "nnabla_1.39_signatures.tsv")
            .read_text().splitlines() if line.startswith(f"{module}\t")}


@pytest.mark.parametrize("module, swept, excused", [
    ("nnabla.functions", F_NAMES, F_NOT_SWEPT),
    ("nnabla.parametric_functions", PF_NAMES, PF_NOT_SWEPT),
    ("nnabla.solvers", SOLVER_NAMES, {"Solver": "the base class (its methods are swept)",
                                      "SolverState": "a record of states",
                                      "solver_api": "a decorator"}),
])
def test_every_public_member_is_swept_or_excused(module, swept, excused):
    """Every member recorded in nnabla 1.39's signature table is swept or named with why not."""
    recorded = _recorded_members(module)
    missing = sorted(recorded - set(swept) - set(excused))
    assert not missing, f"{module}: neither swept nor excused: {missing}"


def test_clip_by_norm_checks_its_default_axis_too():
    """The arguments an adapter fills in itself pass its own checks (axis=None: every
    axis), with the value numpy gives."""
    import numpy as np

    import nnabla as nn
    import nnabla.functions as F
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = F.clip_by_norm(nn.Variable.from_numpy_array(x), 1.0)
    y.forward()
    np.testing.assert_allclose(y.d, x / np.sqrt((x ** 2).sum()), rtol=1e-6)
