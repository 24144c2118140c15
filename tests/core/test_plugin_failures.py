"""Plugins that fail, override or compete: the registry, listings and messages stay sound.

Fake plugins are registered in fresh registries (in-process, or through fake entry points),
so the process-wide registry only serves the tests that use the real toy backend.
"""
import logging
import os
import subprocess
import sys
import textwrap
import warnings
from types import SimpleNamespace

import pytest

import nnabla as nn
import nnabla.solvers as S
from nnabla import cli, ext_utils, plugins
from nnabla.ext_utils import explain, get_extension_context, set_strict_fallback
from nnabla.kernel import Kernel
from nnabla.plugins import (CommunicatorSet, Extension, KernelSet, PluginInfo, SolverKernelSet,
                            hookimpl, manager)


class OwnReLU(Kernel):
    pass


class OwnSigmoid(Kernel):
    pass


class FastReLU(Kernel):
    pass


class OtherFastReLU(Kernel):
    pass


class NoAccepts:
    """A kernel class that does not derive from Kernel and has no ``accepts``."""


OWN = {"ReLU": OwnReLU, "Sigmoid": OwnSigmoid}
FAST = {"ReLU": FastReLU}
OTHER_FAST = {"ReLU": OtherFastReLU}
PLAIN = {"ReLU": NoAccepts}
RULES = {"Sgd": object()}
TABLES = __name__          # this module holds the fake kernel tables


class FakePlugin:
    """Backend ``name`` (array family cpu); the hook named ``fail_at`` raises ``error``."""

    def __init__(self, name, fail_at=None, error=None, kernels=None, solvers=(),
                 communicators=(), depends=()):
        self.name, self.fail_at, self.depends = name, fail_at, depends
        self.error = error if error is not None else RuntimeError(f"{name} broke")
        self.kernels = ([KernelSet(name, ("float",), f"{TABLES}:OWN")] if kernels is None
                        else kernels)
        self.solvers, self.communicators = solvers, communicators

    def _hook(self, hook, result):
        if self.fail_at == hook:
            raise self.error
        return result

    @hookimpl
    def nnabla_plugin_info(self):
        return self._hook("nnabla_plugin_info", PluginInfo(self.name, "1.0", (2, 0)))

    @hookimpl
    def nnabla_extensions(self):
        ext = Extension(self.name, "cpu", ("CpuArray",), "nnabla_ext.cpu", self.depends)
        return self._hook("nnabla_extensions", [ext])

    @hookimpl
    def nnabla_array_classes(self):
        return self._hook("nnabla_array_classes", [])

    @hookimpl
    def nnabla_kernels(self):
        return self._hook("nnabla_kernels", self.kernels)

    @hookimpl
    def nnabla_solver_kernels(self):
        return self._hook("nnabla_solver_kernels", list(self.solvers))

    @hookimpl
    def nnabla_communicators(self):
        return self._hook("nnabla_communicators", list(self.communicators))


class FakeEntryPoint:
    def __init__(self, name, plugin=None, error=None):
        self.name = name
        self.dist = SimpleNamespace(name=f"nnabla-ext-{name}", version="1.0")
        self._plugin, self._error = plugin, error

    def load(self):
        if self._error is not None:
            raise self._error
        return self._plugin


@pytest.fixture
def discovered(monkeypatch):
    """``discovered(*entry_points) -> (registry, plugin warnings)`` through fake entry points."""
    def make(*entry_points):
        monkeypatch.setattr(manager, "_entry_points", lambda: list(entry_points))
        registry = manager.Registry()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            registry.discover()
        return registry, _plugin_warnings(caught)
    return make


@pytest.fixture
def info_log(caplog):
    logger = logging.getLogger("nnabla")      # it does not propagate: attach caplog directly
    logger.addHandler(caplog.handler)
    caplog.handler.setLevel(logging.INFO)
    yield caplog
    logger.removeHandler(caplog.handler)


def _plugin_warnings(caught):
    return [w for w in caught if issubclass(w.category, plugins.NnablaPluginWarning)]


def _quietly(call, *args):
    """``(result, plugin warnings)`` of ``call(*args)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args)
    return result, _plugin_warnings(caught)


def _in_process(*fakes):
    registry = manager.Registry()
    for fake in fakes:
        registry.register(fake, name=fake.name)
    return registry


# -- registry integrity ----------------------------------------------------------------------
@pytest.mark.parametrize("field", ["kernels", "solvers", "communicators"])
def test_a_set_for_another_plugins_backend_fails_activation_with_one_warning(field):
    sets = {"kernels": [KernelSet("base", ("float",), f"{TABLES}:FAST")],
            "solvers": [SolverKernelSet("base", f"{TABLES}:RULES")],
            "communicators": [CommunicatorSet("base", f"{TABLES}:RULES")]}
    intruder = FakePlugin("intruder", **{field: sets[field]})
    registry = _in_process(FakePlugin("base"), intruder)
    with pytest.raises(ValueError, match="intruder"):
        _quietly(registry.activate, "intruder")
    assert registry.records["intruder"].status == "failed"
    assert "overrides=True" in registry.records["intruder"].reason
    assert "'base' ((in-process) 1.0)" in registry.records["intruder"].reason
    registry.activate("base")
    assert registry.kernels[("base", "float")] == OWN


def test_a_failing_activation_warns_exactly_once():
    registry = _in_process(FakePlugin("base"), FakePlugin(
        "intruder", kernels=[KernelSet("base", ("float",), f"{TABLES}:FAST")]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with pytest.raises(ValueError):
                registry.activate("intruder")
    assert len(_plugin_warnings(caught)) == 1


@pytest.mark.parametrize("register_base_first", [True, False])
@pytest.mark.parametrize("activate_base_first", [True, False])
def test_a_declared_override_wins_whatever_the_registration_and_activation_order(
        register_base_first, activate_base_first):
    base = FakePlugin("base")
    fast = FakePlugin("fast", kernels=[KernelSet("base", ("float",), f"{TABLES}:FAST",
                                                 overrides=True)])
    registry = _in_process(*([base, fast] if register_base_first else [fast, base]))
    for backend in (["base", "fast"] if activate_base_first else ["fast", "base"]):
        registry.activate(backend)
    assert registry.kernels[("base", "float")] == {"ReLU": FastReLU, "Sigmoid": OwnSigmoid}
    assert registry.records["fast"].registered["overrides"] == ["base"]


def test_a_declared_override_is_logged_at_info_naming_both_plugins(info_log):
    fast = FakePlugin("fast", kernels=[KernelSet("base", ("float",), f"{TABLES}:FAST",
                                                 overrides=True)])
    _in_process(FakePlugin("base"), fast).activate("fast")
    [record] = [r for r in info_log.records if "overrides" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert "'fast' ((in-process) 1.0)" in record.getMessage()
    assert "'base' ((in-process) 1.0)" in record.getMessage()


@pytest.mark.parametrize("order", [("zeta", "alpha"), ("alpha", "zeta")])
def test_two_overrides_of_one_backend_merge_in_name_order_not_activation_order(order):
    tables = {"alpha": "FAST", "zeta": "OTHER_FAST"}
    fakes = [FakePlugin(n, kernels=[KernelSet("base", ("float",), f"{TABLES}:{tables[n]}",
                                              overrides=True)]) for n in ("alpha", "zeta")]
    registry = _in_process(FakePlugin("base"), *fakes)
    for backend in (*order, "base"):
        registry.activate(backend)
    assert registry.kernels[("base", "float")]["ReLU"] is OtherFastReLU


def test_depends_activates_the_backends_built_on_but_adds_no_fallback():
    registry = _in_process(FakePlugin("low"), FakePlugin("high", kernels=[], depends=("low",)))
    registry.activate("high")
    assert registry.active == {"high", "low"}
    with pytest.raises(NotImplementedError, match=r"no kernel for context backend=\['toy:float'\]"):
        with nn.context_scope(nn.Context(["toy:float"])):      # toy depends on cpu
            nn.functions.sigmoid(nn.Variable((2,)))


# -- listings never crash --------------------------------------------------------------------
STAGES = {   # id: (entry point error, FakePlugin keyword arguments, status, text in reason)
    "import": (ImportError("missing libfoo.so"), {}, "skipped", "libfoo"),
    "import-sys-exit": (SystemExit(3), {}, "skipped", "SystemExit: 3"),
    "plugin-info": (None, {"fail_at": "nnabla_plugin_info"}, "skipped", "broke"),
    "extensions-sys-exit": (None, {"fail_at": "nnabla_extensions", "error": SystemExit()},
                            "skipped", "SystemExit"),
    "array-classes": (None, {"fail_at": "nnabla_array_classes"}, "failed", "broke"),
    "kernels": (None, {"fail_at": "nnabla_kernels", "error": SystemExit("bye")}, "failed",
                "bye"),
    "typo-in-load": (None, {"kernels": [KernelSet("bad", ("float",), f"{TABLES}:OWNN")]},
                     "failed", "OWNN"),
    "table-module": (None, {"kernels": [KernelSet("bad", ("float",), "no_such_table_mod:T")]},
                     "failed", "no_such_table_mod"),
    "table-raises": (None, {"kernels": [KernelSet("bad", ("float",),
                                                  "nnabla_fake_raising_table:T")]},
                     "failed", "table broke"),
    "solver-kernels": (None, {"fail_at": "nnabla_solver_kernels",
                              "error": BaseException("odd")}, "failed", "odd"),
}


@pytest.mark.parametrize("stage", STAGES)
def test_cli_and_listings_survive_a_plugin_failing_at_each_stage(stage, discovered, monkeypatch,
                                                                 tmp_path, capsys):
    error, kw, status, text = STAGES[stage]
    (tmp_path / "nnabla_fake_raising_table.py").write_text("raise RuntimeError('table broke')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry, caught = discovered(FakeEntryPoint("bad", FakePlugin("bad", **kw), error),
                                  FakeEntryPoint("good", FakePlugin("good")))
    monkeypatch.setattr(plugins, "REGISTRY", registry)
    monkeypatch.setattr(ext_utils, "REGISTRY", registry)
    for argv in (["plugins"], ["plugins", "--json"]):
        code, more = _quietly(cli.main, argv)
        caught += more
        assert code == 0
    assert ext_utils.list_extensions() == ["good"]
    rows = {r["name"]: r for r in ext_utils.list_plugins()}
    assert rows["bad"]["status"] == status and text in rows["bad"]["reason"]
    assert rows["good"]["status"] == "active"
    assert [status in str(w.message) for w in caught] == [True]
    assert "bad" in capsys.readouterr().out


def test_keyboard_interrupt_and_generator_exit_from_a_plugin_pass_through():
    for error in (KeyboardInterrupt(), GeneratorExit()):
        with pytest.raises(type(error)):
            manager.Registry().register(FakePlugin("x", "nnabla_plugin_info", error), "x")


def test_a_misspelt_hook_name_skips_the_plugin():
    class Misspelt(FakePlugin):
        @hookimpl
        def nnabla_kernel(self):
            return []

    record, caught = _quietly(manager.Registry().register, Misspelt("m"), "m")
    assert record.status == "skipped" and "nnabla_kernel" in record.reason
    assert len(caught) == 1


def test_broken_package_metadata_warns_once_and_loads_no_plugin(monkeypatch):
    def broken():
        raise ValueError("bad entry_points.txt")
    monkeypatch.setattr(manager, "_entry_points", broken)
    registry = manager.Registry()
    _, caught = _quietly(registry.discover)
    assert [str(w.message) for w in caught] == [
        "cannot list the 'nnabla.plugins' entry points: ValueError: bad entry_points.txt"]
    assert registry.records == {}


def _write_dist(tmp_path, entry_points, modules):
    dist = tmp_path / "fake_plugins-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 0.1\n")
    lines = "".join(f"{name} = {module}\n" for name, module in entry_points.items())
    (dist / "entry_points.txt").write_text(f"[nnabla.plugins]\n{lines}")
    for module, source in modules.items():
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    return dict(os.environ, PYTHONPATH=str(tmp_path))


NAMES_PLUGIN = """
    from nnabla import Context, Variable                 # top-level names of nnabla
    import nnabla.functions as F
    from nnabla.plugins import Extension, KernelSet, PluginInfo, hookimpl

    @hookimpl
    def nnabla_plugin_info():
        return PluginInfo("names", "0.1", (2, 0))

    @hookimpl
    def nnabla_extensions():
        return [Extension("names", "cpu", ("CpuArray",), "nnabla_ext.cpu")]

    @hookimpl
    def nnabla_kernels():
        return [KernelSet("names", ("float",), "nnabla_ext.cpu.kernels:CPU_KERNELZ")]
"""


def test_import_survives_sys_exit_in_a_plugin_and_a_plugin_may_import_nnabla_names(tmp_path):
    env = _write_dist(tmp_path, {"exits": "exits_mod", "names": "names_mod"},
                      {"exits_mod": "import sys\nsys.exit(3)\n", "names_mod": NAMES_PLUGIN})
    code = textwrap.dedent("""
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            import nnabla as nn
        print([(str(x.message).split(' (')[0], x.filename) for x in w
               if type(x.message).__name__ == 'NnablaPluginWarning'])
        print({r['name']: r['status'] for r in nn.ext_utils.list_plugins()})
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    warned, statuses = out.stdout.splitlines()[:2]
    assert warned == "[(\"skipped plugin 'exits'\", '<string>')]"
    assert "'exits': 'skipped'" in statuses and "'names': 'discovered'" in statuses


def test_python_m_nnabla_plugins_lists_a_plugin_failing_at_activation(tmp_path):
    env = _write_dist(tmp_path, {"names": "names_mod"}, {"names_mod": NAMES_PLUGIN})
    out = subprocess.run([sys.executable, "-m", "nnabla", "plugins"], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0, out.stderr
    [line] = [x for x in out.stdout.splitlines() if x.startswith("names ")]
    assert "failed" in line and "CPU_KERNELZ" in line
    assert "failed to activate plugin 'names'" in out.stderr


# -- messages --------------------------------------------------------------------------------
def test_unknown_backend_of_a_failed_plugin_gives_its_reason_and_no_pip_hint():
    registry = _in_process(FakePlugin("bad", fail_at="nnabla_kernels"))
    _quietly(registry.activate_all)
    with pytest.raises(ValueError) as info:
        registry.activate("bad")
    assert "plugin 'bad' ((in-process) 1.0) provides it but failed to activate" in str(info.value)
    assert "bad broke" in str(info.value) and "pip" not in str(info.value)


def test_unknown_backend_of_a_plugin_skipped_at_import_gives_its_reason(discovered):
    registry, _ = discovered(FakeEntryPoint("bad", error=ImportError("missing libfoo.so")))
    with pytest.raises(ValueError, match="provides it but was skipped: ImportError: missing lib") \
            as info:
        registry.activate("bad")
    assert "pip" not in str(info.value)


def test_unknown_backend_left_out_by_nnabla_plugins_says_so(discovered, monkeypatch):
    monkeypatch.setenv(manager.ALLOW_ENV, "good")
    registry, _ = discovered(FakeEntryPoint("good", FakePlugin("good")),
                             FakeEntryPoint("other", FakePlugin("other")))
    with pytest.raises(ValueError, match="NNABLA_PLUGINS='good' does not list it") as info:
        registry.activate("other")
    assert "pip" not in str(info.value)
    monkeypatch.setattr(ext_utils, "REGISTRY", registry)
    assert {r["name"]: r["status"] for r in ext_utils.list_plugins()}["other"] == "excluded"


def test_unknown_backend_with_autoload_disabled_says_so(discovered, monkeypatch):
    monkeypatch.setenv(manager.DISABLE_ENV, "1")
    registry, _ = discovered(FakeEntryPoint("good", FakePlugin("good")))
    with pytest.raises(ValueError, match="NNABLA_DISABLE_PLUGIN_AUTOLOAD is set") as info:
        registry.activate("good")
    assert "pip" not in str(info.value)


def test_unknown_backend_suggests_pip_only_when_nothing_provides_it():
    with pytest.raises(ValueError, match="pip install nnabla-ext-nosuch"):
        _in_process(FakePlugin("good")).activate("nosuch")


def test_warnings_say_skipped_or_failed_and_point_at_the_callers_line():
    registry = manager.Registry()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.register(FakePlugin("a", "nnabla_plugin_info"), "a")
        registry.register(FakePlugin("b", "nnabla_array_classes"), "b")
        for _ in range(2):                                  # the second attempt warns no more
            with pytest.raises(ValueError):
                registry.activate("b")
    skip, fail = _plugin_warnings(caught)
    assert str(skip.message).startswith("skipped plugin 'a' ((in-process) ?): RuntimeError")
    assert str(fail.message).startswith("failed to activate plugin 'b' ((in-process) 1.0)")
    assert skip.filename == fail.filename == __file__


# -- explain and strict mode -----------------------------------------------------------------
def test_a_kernel_table_entry_that_is_not_a_kernel_subclass_fails_activation(monkeypatch):
    plain = FakePlugin("plain", kernels=[KernelSet("plain", ("float",), f"{TABLES}:PLAIN")])
    with pytest.warns(plugins.NnablaPluginWarning, match=r"not nnabla\.kernel\.Kernel subclasses: "
                                                 r"\['ReLU'\]"):
        registry = _in_process(plain)
        with pytest.raises(ValueError, match="plain"):
            registry.activate("plain")


def test_explain_marks_the_winner(monkeypatch):
    text = explain("ReLU", nn.Context(["cpu:float"]))
    assert "-> selected" in text and "crosses" not in text


def test_explain_says_which_kernel_wins_and_that_it_crosses_array_families():
    text = explain("MulScalar", get_extension_context("toy"), val=-2.0)
    toy_line, cpu_line = text.splitlines()[1:3]
    assert "declines" in toy_line and "selected" not in toy_line
    assert cpu_line.endswith("accepts -> selected (crosses from array family 'toy' to 'cpu'; "
                             "arrays are synchronised)")
    assert "-> selected" in explain("MulScalar", get_extension_context("toy"), val=2.0)
    assert "crosses" not in explain("MulScalar", get_extension_context("toy"), val=2.0)


def test_strict_mode_rejects_a_solver_rule_from_another_array_family():
    set_strict_fallback(True)
    try:
        with nn.context_scope(get_extension_context("toy")):
            with pytest.raises(NotImplementedError, match=r"S\.Sgd: .*'toy'.*strict mode"):
                S.Sgd()
        with nn.context_scope(nn.Context(["cpu:float"])):
            S.Sgd()                                       # same family: allowed
    finally:
        set_strict_fallback(False)


def test_a_solver_rule_from_another_array_family_is_logged_once_at_info(info_log):
    ctx = nn.Context(["toy:half", "cpu:float"])            # a context no other test uses
    for _ in range(2):
        with nn.context_scope(ctx):
            S.Adam()
    logged = [r for r in info_log.records if "S.Adam" in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.INFO
    assert "the rule of 'cpu' (array family 'cpu') runs instead" in logged[0].getMessage()
