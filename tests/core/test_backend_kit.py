"""The backend kit (``nnabla.testing.backend_kit``) on the test backends, on a deliberately
broken backend, and on the example backend of ``docs/plugins.md`` (so the guide stays
runnable)."""
import doctest
import importlib
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import nnabla as nn
import nnabla.array_family
from nnabla import plugins
from nnabla.array_family import ArrayFamily
from nnabla.ext_utils import set_strict_fallback
from nnabla.kernel import Kernel
from nnabla.plugins import Extension, KernelSet, PluginInfo, SolverKernelSet, hookimpl
from nnabla.solver_rule import GradOps, Rule
from nnabla.testing import backend_kit, function_cases
from nnabla.testing.backend_kit import FAILED, NOT_IMPLEMENTED, PASSED, check_backend, main
from nnabla.testing.function_cases import ALL_CASES
from nnabla.testing.graph_semantics import GRAPH_CHECKS
from nnabla_ext.cpu.solvers import GRAD_OPS

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
SOLVERS = ["AMSBound", "AMSGRAD", "AdaBelief", "AdaBound", "Adadelta", "Adagrad", "Adam",
           "AdamW", "Adamax", "Lamb", "Lars", "Lion", "Momentum", "Nesterov", "RMSprop",
           "RMSpropGraves", "Sgd", "SgdW"]


@pytest.fixture
def registry_snapshot():
    """Backends registered in the test are gone afterwards (the registry is process-wide)."""
    registry = plugins.REGISTRY
    names = ("records", "extensions", "families", "kernels", "solver_rules", "communicators")
    saved = {name: dict(getattr(registry, name)) for name in names}
    active, layers = set(registry.active), {t: dict(v) for t, v in registry._layers.items()}
    families = dict(nnabla.array_family._families)
    yield
    for name, value in saved.items():
        setattr(registry, name, value)
    registry.active, registry._layers = active, layers
    nnabla.array_family._families.clear()
    nnabla.array_family._families.update(families)
    registry.version += 1            # memos keyed on the version see a new registry


# -- the test backends ----------------------------------------------------------------------
def test_boxed_passes_every_function_solver_and_graph_check():
    report = check_backend("boxed")
    report.raise_on_failure()
    assert report.names(NOT_IMPLEMENTED) == []
    assert len(report.names(PASSED)) >= 200
    assert report.names(PASSED) == sorted({c.name for c in ALL_CASES})
    assert report.names(PASSED, "solver") == SOLVERS
    assert len(report.names(PASSED, "graph")) == len(GRAPH_CHECKS)


def test_toy_passes_its_kernels_and_lists_the_rest_as_not_implemented():
    report = check_backend("toy")
    assert report.failed == []
    assert report.names(PASSED) == ["AddScalar", "ReLU"]
    mul = next(r for r in report.results if r.name == "MulScalar")
    assert mul.status == NOT_IMPLEMENTED and "val must be positive" in mul.message
    assert len(report.names(NOT_IMPLEMENTED)) == len({c.name for c in ALL_CASES}) - 2
    assert [r for r in report.results if r.kind == "solver"] == []
    graph = {r.name: r for r in report.results if r.kind == "graph"}
    assert graph["nn.grad equals backward"].status == NOT_IMPLEMENTED   # needs GreaterScalar
    assert len(report.names(PASSED, "graph")) == 4


def test_a_backend_without_half_kernels_reports_every_function_not_implemented():
    report = check_backend("toy", type_config="half", functions=["ReLU"], graph=False)
    assert [(r.name, r.status) for r in report.results] == [("ReLU", NOT_IMPLEMENTED)]


def test_boxed_half_matches_the_references_within_half_tolerances():
    report = check_backend("boxed", type_config="half", solvers=False, graph=False,
                           functions=["Affine", "ReLU", "Sum", "BatchNormalization"])
    report.raise_on_failure()
    assert len(report.names(PASSED)) == 4


@pytest.mark.parametrize("strict", [False, True])
def test_the_strict_fallback_setting_is_restored(strict):
    from nnabla._state import STATE
    set_strict_fallback(strict)
    try:
        check_backend("toy", functions=["ReLU"], solvers=False, graph=False)
        assert STATE.strict_fallback is strict
    finally:
        set_strict_fallback(False)


def test_unknown_function_names_are_refused():
    with pytest.raises(ValueError, match="unknown functions \\['Relu'\\]"):
        check_backend("toy", functions=["Relu"])


# -- a deliberately broken backend ----------------------------------------------------------
class Wrapped:
    def __init__(self, value):
        self.value = np.asarray(value)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)


class WrongReLU(Kernel):
    def forward(self, xs):
        return [Wrapped(np.abs(xs[0].value))]          # |x| is not max(x, 0)

    def backward(self, xs, ys, dys, propagate_down):
        return [Wrapped(dys[0].value)]


class AddScalar(Kernel):
    def forward(self, xs):
        return [Wrapped(xs[0].value + np.float32(self.val))]

    def backward(self, xs, ys, dys, propagate_down):
        return [Wrapped(dys[0].value.copy())]


class MulScalar(Kernel):
    """Its forward_ufunc is right (the graph runs it), its forward is not."""

    def setup(self):
        self.forward_ufunc = (lambda x, v: Wrapped(x.value * v), np.float32(self.val))

    def forward(self, xs):
        return [Wrapped(xs[0].value * np.float32(self.val) + 1)]

    def backward(self, xs, ys, dys, propagate_down):
        return [Wrapped(dys[0].value * np.float32(self.val))]


def _wrong_sgd(xp, p, g, state, t, hp):
    p.value += hp["lr"] * g.value                      # ascends


def _iadd(a, b):
    a.value += b.value
    return a


WRAPPED = ArrayFamily(
    "wrapped", array_type=Wrapped, xp=np, to_numpy=lambda a: a.value.copy(),
    from_numpy=lambda n: Wrapped(n.copy()), asarray=Wrapped,
    zeros=lambda shape, dtype: Wrapped(np.zeros(shape, dtype)),
    full=lambda shape, value, dtype: Wrapped(np.full(shape, value, dtype)),
    astype=lambda a, dtype: Wrapped(a.value.astype(dtype)), copy=lambda a: Wrapped(a.value.copy()),
    reshape=lambda a, shape: Wrapped(a.value.reshape(shape)),
    add=lambda a, b: Wrapped(a.value + b.value), iadd=_iadd, nbytes=lambda a: a.value.nbytes,
    owner=lambda a: a.value if a.value.base is None else a.value.base)
BROKEN_KERNELS = {"ReLU": WrongReLU, "AddScalar": AddScalar, "MulScalar": MulScalar}
def _unwrapped(op):
    return lambda xp, *args: op(np, *[a.value if isinstance(a, Wrapped) else a for a in args])


BROKEN_SOLVERS = {"Sgd": Rule(_wrong_sgd, grad_ops=GradOps(*map(_unwrapped, GRAD_OPS)))}


class BrokenPlugin:
    @hookimpl
    def nnabla_plugin_info(self):
        return PluginInfo(name="broken", version="0.0", api_version=(2, 0))

    @hookimpl
    def nnabla_extensions(self):
        return [Extension("broken", "wrapped", ("WrappedArray",), __name__, ("cpu",))]

    @hookimpl
    def nnabla_array_classes(self):
        return [WRAPPED]

    @hookimpl
    def nnabla_kernels(self):
        return [KernelSet("broken", ("float",), f"{__name__}:BROKEN_KERNELS")]

    @hookimpl
    def nnabla_solver_kernels(self):
        return [SolverKernelSet("broken", f"{__name__}:BROKEN_SOLVERS")]


def context(device_id="0", type_config="float", **kw):
    """The broken backend's context (this module is its extension module)."""
    return nn.Context(backend=[f"broken:{type_config}", f"cpu:{type_config}"],
                      array_class="WrappedArray", device_id=str(device_id))


def test_a_wrong_kernel_and_a_wrong_solver_rule_are_reported(registry_snapshot, capsys):
    plugins.register(BrokenPlugin(), name="broken")
    report = check_backend("broken", functions=["ReLU", "AddScalar", "Affine"])
    assert report.names(FAILED) == ["ReLU"]
    assert report.names(PASSED) == ["AddScalar"]
    assert report.names(NOT_IMPLEMENTED) == ["Affine"]
    sgd = next(r for r in report.results if r.kind == "solver")
    assert sgd.status == FAILED and "parameter w" in sgd.message
    relu = next(r for r in report.failed if r.name == "ReLU")
    assert "output 0" in relu.message and "Mismatched elements" in relu.message
    with pytest.raises(AssertionError, match="function ReLU"):
        report.raise_on_failure()
    assert main(["broken", "--functions", "ReLU", "AddScalar", "--no-graph"]) == 1
    table = capsys.readouterr().out
    assert re.search(r"function\s+ReLU\s+failed", table)
    assert "functions: 1 passed, 1 failed, 0 not implemented" in table


def test_a_forward_ufunc_that_disagrees_with_forward_is_reported(registry_snapshot):
    plugins.register(BrokenPlugin(), name="broken")
    report = check_backend("broken", functions=["MulScalar"], solvers=False, graph=False)
    assert report.names(FAILED) == ["MulScalar"]
    assert "MulScalar.forward_ufunc and forward differ" in report.failed[0].message


# -- the guide's example backend ------------------------------------------------------------
def _guide_example():
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    return next(b for b in blocks if b.startswith('"""mydevice:'))


def test_the_guides_example_backend_passes_the_kit(registry_snapshot, tmp_path, monkeypatch):
    (tmp_path / "guide_mydevice.py").write_text(_guide_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("guide_mydevice")
    try:
        plugins.register(module)
        report = check_backend("mydevice")
    finally:
        sys.modules.pop("guide_mydevice", None)
    report.raise_on_failure()
    assert report.names(PASSED) == ["AddScalar", "MulScalar", "ReLU"]
    assert report.names(PASSED, "solver") == ["Sgd"]
    assert len(report.names(PASSED, "graph")) >= 4


def test_the_command_line_prints_a_table_and_exits_zero_when_nothing_fails():
    out = subprocess.run([sys.executable, "-m", "nnabla.testing.backend_kit", "toy",
                          "--functions", "ReLU", "AddScalar", "--no-graph"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "toy:float: functions: 2 passed, 0 failed, 0 not implemented" in out.stdout


def test_the_kits_doctests_pass():
    assert doctest.testmod(backend_kit).failed == 0
    assert doctest.testmod(function_cases).failed == 0


# -- core bugs the kit found ---------------------------------------------------------------
def test_recompute_restores_a_cleared_input_chain():
    """``h = relu(2x)`` with ``h.recompute``: after ``forward(clear_no_need_grad=True)`` both
    ``2x`` (no backward reads it) and ``h`` are cleared; backward must recompute ``h`` from
    ``x`` (or raise), not from the cleared ``2x``, which gives zero gradients."""
    import nnabla.functions as F
    x = nn.Variable.from_numpy_array(np.array([[-1.0, 2.0, 3.0]]), need_grad=True)
    h = F.relu(F.mul_scalar(x, 2.0))
    h.recompute = True
    y = F.add_scalar(F.mul_scalar(h, 0.5), 1.0)
    x.grad.zero()
    y.forward(clear_no_need_grad=True)
    y.backward(np.ones((1, 3), np.float32))
    np.testing.assert_array_equal(x.g, [[0, 1, 1]])


def test_half_keeps_in_place_running_statistics():
    """Under ``type_config='half'`` batch normalization's running mean and variance stay at
    their initial values: the engine passes the writable heads of the inputs the spec
    ``mutates`` through float16 (new arrays), and writes nothing back because the compute
    and storage dtypes are both float32."""
    report = check_backend("cpu", type_config="half", functions=[], solvers=False)
    report.raise_on_failure()
