"""The bad-input sweep (see ``test_bad_input_sweep.py``) over the rest of the public API:
solver methods, ``nn.Variable`` / ``nn.NdArray`` constructors and setters, ``nn.grad``, the
parameter helpers, the data iterators and the monitors.

Their arguments are plain Python, so each mistake's expectation is written here (``RAISE``
where nnabla 1.39 refuses the value too or takes it to mean something else silently;
``EITHER`` where a value nnabla takes is a reasonable reading, e.g. a scalar assigned to
``.d`` fills it). Each row builds fresh objects, so one call never sees another's state.
"""
from __future__ import annotations

import numpy as np
import pytest
from bad_input_sweep_calls import EITHER, RAISE, judge, report, watchdog

import nnabla as nn
import nnabla.solvers as S
from nnabla.monitor import Monitor, MonitorImage, MonitorImageTile, MonitorSeries, \
    MonitorTimeElapsed
from nnabla.utils import data_iterator as di

_watchdog = pytest.fixture(autouse=True)(watchdog)

NONE, STR = ("None", None), ("a str", "x")
NUMBER_MISTAKES = [NONE + (RAISE,), STR + (RAISE,), ("a list", [0.5], RAISE),
                   ("a numpy array", np.ones(3), RAISE)]
COUNT_MISTAKES = [NONE + (RAISE,), ("a str", "2", RAISE), ("a fractional float", 2.5, RAISE),
                  ("zero", 0, RAISE), ("a negative count", -1, RAISE), ("a list", [2], RAISE)]
SHAPE_MISTAKES = [NONE + (RAISE,), ("a str", "23", RAISE), ("a fractional float", (2.5, 3), RAISE),
                  ("a negative size", (2, -3), RAISE), ("a nested tuple", ((2,), 3), RAISE),
                  ("a dict", {2: 3}, RAISE), ("integral floats", (2.0, 3.0), EITHER)]
ARRAY_MISTAKES = [NONE + (RAISE,), STR + (RAISE,), ("another shape", np.ones((3, 2)), RAISE),
                  ("a ragged list", [[1, 2], [3]], RAISE),
                  ("a complex array", np.ones((2, 3), np.complex64), RAISE),
                  ("a scalar", 3.0, EITHER), ("a list of the shape", [[1, 2, 3]] * 2, EITHER)]
HOOK_MISTAKES = [STR + (RAISE,), ("an int", 3, RAISE)]


def _x(shape=(2, 3), need_grad=True):
    v = nn.Variable.from_numpy_array(np.arange(np.prod(shape), dtype=np.float32)
                                     .reshape(shape), need_grad=need_grad)
    v.g = np.ones(shape, np.float32)
    return v


# --- solvers -------------------------------------------------------------------------------

def _solver(name="Sgd"):
    solver = getattr(S, name)()
    solver.set_parameters({"w": _x(), "b": _x((3,))})
    return solver


def _solver_state(solver):
    def state():
        params = solver.get_parameters()
        return ({k: (v.d.tolist(), v.g.tolist()) for k, v in params.items()},
                {k: (s.t, {n: a.d.tolist() for n, a in s.pstate.items()})
                 for k, s in solver.get_states().items()},
                float(solver.learning_rate()))
    return state


def _solver_rows(name):
    """(api, argument, label, solver -> call, expectation)"""
    rows = []
    for label, bad, expect in [("a list", [_x()], RAISE), NONE + (RAISE,), STR + (RAISE,),
                               ("a dict of arrays", {"w": np.ones(3)}, RAISE),
                               ("an int key", {1: _x()}, RAISE)]:
        rows.append(("Solver.set_parameters", "param_dict", label,
                     lambda s, b=bad: s.set_parameters(b), expect))
    for method, arg in [("weight_decay", "decay_rate"), ("clip_grad_by_norm", "clip_norm"),
                        ("scale_grad", "scale"), ("set_learning_rate", "learning_rate")]:
        for label, bad, expect in NUMBER_MISTAKES:
            rows.append((f"Solver.{method}", arg, label,
                         lambda s, m=method, b=bad: getattr(s, m)(b), expect))
    for method in ("update", "weight_decay", "clip_grad_by_norm"):
        for hook in ("pre", "post"):
            arg = f"{'update_' if method == 'update' else ''}{hook}_hook"
            for label, bad, expect in HOOK_MISTAKES:
                args = () if method == "update" else (0.5,)
                rows.append((f"Solver.{method}", arg, label,
                             lambda s, m=method, a=args, k=arg, b=bad:
                             getattr(s, m)(*a, **{k: b}), expect))
    for label, bad, expect in [NONE + (RAISE,), ("a list", [1], RAISE),
                               ("an unknown key", {"nope": None}, RAISE)]:
        rows.append(("Solver.set_states", "states", label, lambda s, b=bad: s.set_states(b),
                     expect))
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
        rows.append(("Solver.remove_parameters", "keys", label,
                     lambda s, b=bad: s.remove_parameters(b), expect))
    for method in ("save_states", "load_states"):
        for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
            rows.append((f"Solver.{method}", "path", label,
                         lambda s, m=method, b=bad: getattr(s, m)(b), expect))
    return [(api, arg, label, call, expect, name) for api, arg, label, call, expect in rows]


SOLVERS_SWEPT = ("Sgd", "Adam", "AdamW", "Lars")     # plain, per-parameter states, fused wd


@pytest.mark.parametrize("name", SOLVERS_SWEPT)
def test_solver_methods(name):
    failures = []
    for api, arg, label, call, expect, _ in _solver_rows(name):
        solver = _solver(name)
        why = judge(api, arg, lambda: call(solver), expect, state=_solver_state(solver))
        if why:
            failures.append((f"S.{name}: {api} {arg}={label}", why))
    report(failures)


# --- Variable and NdArray ------------------------------------------------------------------

def _array_rows():
    rows = []
    for label, bad, expect in SHAPE_MISTAKES:
        rows.append(("nn.Variable", "shape", label, lambda b=bad: nn.Variable(b), expect))
        rows.append(("nn.NdArray", "shape", label, lambda b=bad: nn.NdArray(b), expect))
        rows.append(("Variable.reshape", "shape", label,
                     lambda b=bad: _x().reshape(b), expect))
    for label, bad, expect in [("another size", (7,), RAISE), ("-1", (-1,), EITHER),
                               ("two -1", (-1, -1), RAISE)]:
        rows.append(("Variable.reshape", "shape", label, lambda b=bad: _x().reshape(b), expect))
    for label, bad, expect in [NONE + (RAISE,), STR + (RAISE,),
                               ("a ragged list", [[1, 2], [3]], RAISE),
                               ("a complex array", np.ones(2, np.complex64), RAISE),
                               ("an object array", np.array([None, 1]), RAISE),
                               ("a list of numbers", [1.0, 2.0], EITHER)]:
        rows.append(("Variable.from_numpy_array", "data", label,
                     lambda b=bad: nn.Variable.from_numpy_array(b), expect))
        rows.append(("NdArray.from_numpy_array", "nparr", label,
                     lambda b=bad: nn.NdArray.from_numpy_array(b), expect))
    for label, bad, expect in ARRAY_MISTAKES:
        for attr in ("d", "g"):
            rows.append(("NdArray.data", None, label,
                         lambda b=bad, a=attr: setattr(_x(), a, b), expect))
        rows.append(("NdArray.data", None, label,
                     lambda b=bad: setattr(_x().data, "data", b), expect))
    # None keeps the type, as in nnabla 1.39.
    for label, bad, expect in [NONE + (EITHER,), STR + (RAISE,),
                               ("a complex type", np.complex64, RAISE)]:
        rows.append(("NdArray.cast", "dtype", label, lambda b=bad: _x().data.cast(b), expect))
    for label, bad, expect in [NONE + (RAISE,), STR + (RAISE,), ("a list", [1], RAISE)]:
        rows.append(("NdArray.fill", "value", label, lambda b=bad: _x().data.fill(b), expect))
    # nnabla 1.39 takes any object's truth value for these flags.
    for attr in ("need_grad", "persistent"):
        for label, bad, expect in [("a str for a bool", "yes", EITHER), NONE + (EITHER,)]:
            rows.append((f"Variable.{attr}", None, label,
                         lambda b=bad, a=attr: setattr(_x(), a, b), expect))
    for label, bad, expect in [("a list", [_x()], RAISE), ("a numpy array", np.ones(3), RAISE),
                               NONE + (RAISE,)]:
        rows.append(("Variable.rewire_on", "var", label,
                     lambda b=bad: _x().rewire_on(b), expect))
    return rows


def test_variable_and_ndarray():
    failures = []
    for api, arg, label, call, expect in _array_rows():
        why = judge(api, arg, call, expect)
        if why:
            failures.append((f"{api} {arg}={label}", why))
    report(failures)


# --- nn.grad -------------------------------------------------------------------------------

def _grad_rows():
    def graph():
        x = _x()
        return x, (x * x).apply(persistent=True)
    rows = []
    for label, make, expect in [
            ("None", lambda x, y: None, RAISE), ("a str", lambda x, y: "x", RAISE),
            ("an int", lambda x, y: 3, RAISE),
            ("a list of numpy arrays", lambda x, y: [np.ones(3)], RAISE)]:
        rows.append(("nn.grad", "outputs", label,
                     lambda m=make: (lambda x, y: nn.grad(m(x, y), [x]))(*graph()), expect))
        rows.append(("nn.grad", "inputs", label,
                     lambda m=make: (lambda x, y: nn.grad([y], m(x, y)))(*graph()), expect))
    for label, make, expect in [
            ("a str", lambda y: ["x"], RAISE), ("one too many", lambda y: [1.0, 1.0], RAISE),
            ("an array of another shape", lambda y: [np.ones((3, 2))], RAISE),
            ("a scalar", lambda y: [2.0], EITHER), ("None", lambda y: [None], EITHER)]:
        rows.append(("nn.grad", "grad_outputs", label,
                     lambda m=make: (lambda x, y: nn.grad([y], [x], grad_outputs=m(y)))(
                         *graph()), expect))
    return rows


def test_grad():
    failures = []
    for api, arg, label, call, expect in _grad_rows():
        why = judge(api, arg, call, expect)
        if why:
            failures.append((f"{api} {arg}={label}", why))
    report(failures)


# --- parameter helpers ---------------------------------------------------------------------

def _enter(scope):
    """Enter and leave a parameter scope (a failure must leave the current scope)."""
    with scope as entered:
        return entered


def _parameter_rows(tmp_path):
    from nnabla import parameter as P
    rows = []
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE), ("empty", "", RAISE)]:
        rows.append(("nn.parameter.get_parameter_or_create", "name", label,
                     lambda b=bad: P.get_parameter_or_create(b, (2,)), expect))
        # An empty scope name is the current scope, as in nnabla 1.39.
        rows.append(("nn.parameter_scope", "name", label,
                     lambda b=bad: _enter(nn.parameter_scope(b)),
                     expect if bad != "" else EITHER))
        rows.append(("nn.parameter.get_parameter", "key", label,
                     lambda b=bad: P.get_parameter(b), expect if bad != "" else EITHER))
    for label, bad, expect in SHAPE_MISTAKES:
        if bad is None:
            continue            # no shape: the initializer's (an array) or an error
        rows.append(("nn.parameter.get_parameter_or_create", "shape", label,
                     lambda b=bad: P.get_parameter_or_create("w", b), expect))
    for label, bad, expect in [STR + (RAISE,), ("an int", 3, RAISE),
                               ("an array of another shape", np.ones(5), RAISE)]:
        rows.append(("nn.parameter.get_parameter_or_create", "initializer", label,
                     lambda b=bad: P.get_parameter_or_create("w", (2,), b), expect))
    # nnabla 1.39 registers whatever it is given (a low-level helper; kept so).
    for label, bad, expect in [STR + (EITHER,), ("a numpy array", np.ones(2), EITHER),
                               NONE + (EITHER,)]:
        rows.append(("nn.parameter.set_parameter", "param", label,
                     lambda b=bad: P.set_parameter("w", b), expect))
    for label, bad, expect in [STR + (RAISE,), ("an int", 3, RAISE)]:
        rows.append(("nn.get_parameters", "params", label,
                     lambda b=bad: nn.get_parameters(params=b), expect))
        rows.append(("nn.get_parameters", "path", label,
                     lambda b=bad: nn.get_parameters(path=b), expect if bad != "x" else EITHER))
    missing = str(tmp_path / "missing.h5")
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE),
                               ("a missing file", missing, RAISE),
                               ("an unknown extension", str(tmp_path / "p.xyz"), RAISE)]:
        rows.append(("nn.load_parameters", "path", label,
                     lambda b=bad: nn.load_parameters(b), expect))
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE),
                               ("an unknown extension", str(tmp_path / "p.xyz"), RAISE)]:
        rows.append(("nn.save_parameters", "path", label,
                     lambda b=bad: nn.save_parameters(b), expect))
    for label, bad, expect in [STR + (RAISE,), ("a dict of arrays", {"w": np.ones(2)}, RAISE),
                               ("a list", [_x()], RAISE)]:
        rows.append(("nn.save_parameters", "params", label,
                     lambda b=bad: nn.save_parameters(str(tmp_path / "p.h5"), b), expect))
    return rows


def test_parameter_helpers(tmp_path):
    failures = []
    for api, arg, label, call, expect in _parameter_rows(tmp_path):
        why = judge(api, arg, call, expect, allowed=(FileNotFoundError,))
        if why:
            failures.append((f"{api} {arg}={label}", why))
    report(failures)


# --- data iterators ------------------------------------------------------------------------

def _load(i):
    return np.full((2,), i, np.float32), np.array([i % 2])


def _iterator_rows(tmp_path):
    rows = []
    simple = {"load_func": _load, "num_examples": 4, "batch_size": 2, "use_thread": False}

    def make(api, fn, base, arg, label, bad, expect):
        def call():
            it = fn(**{**base, arg: bad})
            try:
                it.next()
            finally:
                it.close()
        return (api, arg, label, call, expect)

    for arg, mistakes in [("load_func", [NONE + (RAISE,), STR + (RAISE,)]),
                          ("num_examples", COUNT_MISTAKES), ("batch_size", COUNT_MISTAKES),
                          ("rng", [STR + (RAISE,), ("an int", 3, RAISE)]),
                          ("shuffle", [("a str for a bool", "yes", EITHER)])]:
        for label, bad, expect in mistakes:
            rows.append(make("data_iterator_simple", di.data_iterator_simple, simple, arg,
                             label, bad, expect))
    csv = tmp_path / "data.csv"
    csv.write_text("x:0,y\n1,0\n2,1\n3,0\n")
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
        rows.append(make("data_iterator_csv_dataset", di.data_iterator_csv_dataset,
                         {"uri": str(csv), "batch_size": 2, "use_thread": False,
                          "with_file_cache": False}, "uri", label, bad, expect))
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
        rows.append(make("data_iterator_cache", di.data_iterator_cache,
                         {"uri": str(tmp_path), "batch_size": 2, "use_thread": False}, "uri",
                         label, bad, expect))
    for label, bad, expect in COUNT_MISTAKES:
        rows.append(make("data_iterator_csv_dataset", di.data_iterator_csv_dataset,
                         {"uri": str(csv), "batch_size": 2, "use_thread": False,
                          "with_file_cache": False}, "batch_size", label, bad, expect))
    for label, bad, expect in [NONE + (RAISE,), STR + (RAISE,), ("a list of ints", [3], RAISE)]:
        rows.append(make("data_iterator", di.data_iterator, {"batch_size": 2,
                                                             "use_thread": False},
                         "data_source", label, bad, expect))
        rows.append(make("data_iterator_concat_datasets", di.data_iterator_concat_datasets,
                         {"batch_size": 2, "use_thread": False}, "data_source_list", label,
                         bad, expect))
    return rows


def test_data_iterators(tmp_path):
    failures = []
    for api, arg, label, call, expect in _iterator_rows(tmp_path):
        why = judge(api, arg, call, expect, allowed=(FileNotFoundError,))
        if why:
            failures.append((f"{api} {arg}={label}", why))
    report(failures)


# --- monitors ------------------------------------------------------------------------------

def _monitor_rows(tmp_path):
    monitor = Monitor(str(tmp_path))
    rows = []
    for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
        rows.append(("Monitor", "save_path", label, lambda b=bad: Monitor(b), expect))
    for cls, extra in [(MonitorSeries, {}), (MonitorTimeElapsed, {}),
                       (MonitorImage, {}), (MonitorImageTile, {})]:
        api = cls.__name__
        for label, bad, expect in [NONE + (RAISE,), ("an int", 3, RAISE)]:
            rows.append((api, "name", label,
                         lambda c=cls, b=bad: c(b, monitor, verbose=False), expect))
        for label, bad, expect in [STR + (RAISE,), ("an int", 3, RAISE)]:
            rows.append((api, "monitor", label,
                         lambda c=cls, b=bad: c("m", b, verbose=False), expect))
        images = cls in (MonitorImage, MonitorImageTile)
        for label, bad, expect in COUNT_MISTAKES:
            # An interval of 0 or less flushes at every add (as nnabla 1.39); the image
            # monitors' schedule divides by it.
            if label in ("zero", "a negative count") and not images:
                expect = EITHER
            rows.append((api, "interval", label,
                         lambda c=cls, b=bad: c("m", monitor, interval=b, verbose=False),
                         expect))
    for cls in (MonitorImage, MonitorImageTile):
        for label, bad, expect in COUNT_MISTAKES:
            if label == "zero":     # saves no image, as in nnabla 1.39
                expect = EITHER
            rows.append((cls.__name__, "num_images", label,
                         lambda c=cls, b=bad: c("m", monitor, num_images=b, verbose=False),
                         expect))
        for label, bad, expect in [NONE + (RAISE,), STR + (RAISE,),
                                   ("an array of 1 dimension", np.ones(3), RAISE)]:
            rows.append((f"{cls.__name__}.add", "var", label,
                         lambda c=cls, b=bad: c("m", monitor, interval=1, verbose=False)
                         .add(1, b), expect))
    for label, bad, expect in [NONE + (RAISE,), STR + (RAISE,)]:
        rows.append(("MonitorSeries.add", "value", label,
                     lambda b=bad: MonitorSeries("m", monitor, verbose=False).add(1, b),
                     expect))
        rows.append(("MonitorSeries.add", "index", label,
                     lambda b=bad: MonitorSeries("m", monitor, verbose=False).add(b, 1.0),
                     expect))
        rows.append(("MonitorTimeElapsed.add", "index", label,
                     lambda b=bad: MonitorTimeElapsed("m", monitor, verbose=False).add(b),
                     expect))
    return rows


def test_monitors(tmp_path):
    failures = []
    for api, arg, label, call, expect in _monitor_rows(tmp_path):
        why = judge(api, arg, call, expect)
        if why:
            failures.append((f"{api} {arg}={label}", why))
    report(failures)
