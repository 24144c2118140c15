"""The plugin protocol: discovery, isolation, third-party backends, listing."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla_ext.toy as toy   # installed by the nox tests session
from nnabla import plugins
from nnabla.ext_utils import (explain, get_extension_context, import_extension_module,
                              list_extensions, list_plugins, set_strict_fallback)


def test_cpu_backend_is_registered_through_the_entry_point():
    rows = {r["name"]: r for r in list_plugins()}
    assert rows["cpu"]["distribution"] == "nnabla-ext-cpu"
    assert "cpu" in list_extensions()
    F.relu(nn.NdArray.from_numpy_array(np.ones(2)))        # activates the backend
    assert rows["cpu"]["status"] in ("active", "discovered")
    assert nn.plugins.REGISTRY.records["cpu"].status == "active"


def test_core_contains_no_kernels_and_imports_no_plugin():
    code = ("import sys, nnabla; "
            "print(any(m.startswith('nnabla_ext.cpu.kernels') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_toy_backend_runs_its_kernels_and_falls_back_to_cpu_with_synchronised_arrays():
    toy.CALLS.clear()
    x = nn.Variable.from_numpy_array(np.array([-1.0, 2.0, 3.0]), need_grad=True)
    with nn.context_scope(get_extension_context("toy")):
        y = F.sigmoid(F.relu(F.add_scalar(x, 1.0)))      # sigmoid has no toy kernel
    y.forward()
    assert toy.CALLS == ["AddScalar", "ReLU"]
    expected = 1 / (1 + np.exp(-np.maximum(np.array([-1.0, 2.0, 3.0]) + 1, 0)))
    np.testing.assert_allclose(y.d, expected, rtol=1e-6)
    y.backward()
    s = expected
    np.testing.assert_allclose(x.g, s * (1 - s) * (np.array([-1, 2, 3]) + 1 > 0), rtol=1e-5)


def test_a_kernel_declining_arguments_moves_resolution_to_the_next_backend():
    toy.CALLS.clear()
    x = nn.Variable.from_numpy_array(np.ones(3))
    with nn.context_scope(get_extension_context("toy")):
        y = F.mul_scalar(x, -2.0)
    y.forward()
    assert "MulScalar" not in toy.CALLS
    np.testing.assert_array_equal(y.d, -2.0)
    assert "declines" in explain("MulScalar", get_extension_context("toy"), val=-2.0)


def test_strict_mode_turns_a_device_fallback_into_an_error():
    set_strict_fallback(True)
    try:
        with nn.context_scope(get_extension_context("toy")):
            with pytest.raises(NotImplementedError, match="strict"):
                F.tanh(nn.Variable((2,)))
    finally:
        set_strict_fallback(False)


def test_unknown_backend_names_installed_ones_and_a_pip_hint():
    with pytest.raises(ValueError, match=r"backend 'nosuchdevice'.*installed backends.*pip"):
        get_extension_context("nosuchdevice")
    with pytest.raises(ValueError, match="nosuchdevice"):
        with nn.context_scope(nn.Context(["nosuchdevice:float"])):
            F.relu(nn.Variable((2,)))


def test_missing_kernel_error_names_what_would_work():
    with nn.context_scope(nn.Context(["cpu:float"])):
        pass
    with pytest.raises(NotImplementedError, match="implemented by: .*cpu:float"):
        with nn.context_scope(nn.Context(["toy:half"])):
            F.relu(nn.Variable((2,)))


def test_bad_type_config_is_rejected_by_name():
    with pytest.raises(ValueError, match="type_config"):
        get_extension_context("cpu", type_config="double")


def test_import_extension_module_returns_the_plugin_module_with_helpers():
    mod = import_extension_module("cpu")
    assert mod.context().backend == ["cpu:float"]
    assert mod.get_devices() == ["0"]
    mod.device_synchronize("0")
    mod.clear_memory_cache()


class _FailingAtInfo:
    @plugins.hookimpl
    def nnabla_plugin_info(self):
        raise RuntimeError("boom at load")


class _WrongApi:
    @plugins.hookimpl
    def nnabla_plugin_info(self):
        return plugins.PluginInfo(name="future", version="9.0", api_version=(3, 0))

    @plugins.hookimpl
    def nnabla_extensions(self):
        return [plugins.Extension("future", "future", ("FutureArray",), "nowhere")]


def test_broken_in_process_plugins_warn_once_and_are_recorded_as_skipped(monkeypatch):
    monkeypatch.setattr(plugins.REGISTRY, "records", dict(plugins.REGISTRY.records))
    with pytest.warns(plugins.NnablaPluginWarning, match="boom at load"):
        rec = plugins.register(_FailingAtInfo(), name="failing")
    assert rec.status == "skipped" and "boom" in rec.reason
    with pytest.warns(plugins.NnablaPluginWarning, match="needs core API 3.0"):
        rec = plugins.register(_WrongApi(), name="future")
    assert rec.status == "skipped"
    assert "future" not in list_extensions()
    with pytest.raises(ValueError, match="plugin 'future' .* was skipped: .*needs core API 3.0"):
        get_extension_context("future")


def test_broken_entry_point_plugin_does_not_break_import(tmp_path):
    dist = tmp_path / "broken_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[nnabla.plugins]\nbroken = broken_mod\n")
    (tmp_path / "broken_mod.py").write_text("raise ImportError('missing libfoo.so')\n")
    code = textwrap.dedent("""
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter('always')
            import nnabla as nn, nnabla.functions as F, numpy as np
        print(len([x for x in w if 'broken' in str(x.message)]))
        print(F.relu(nn.NdArray.from_numpy_array(np.array([-1., 1.]))).data.tolist())
        from nnabla.ext_utils import list_plugins
        print([r['status'] for r in list_plugins() if r['name'] == 'broken'])
    """)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:3] == ["1", "[0.0, 1.0]", "['skipped']"]


def test_autoload_can_be_disabled_and_plugins_listed_on_the_command_line():
    env = dict(os.environ, NNABLA_DISABLE_PLUGIN_AUTOLOAD="1")
    out = subprocess.run([sys.executable, "-c", "import nnabla.ext_utils as e; "
                          "print(e.list_extensions())"], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "[]"
    out = subprocess.run([sys.executable, "-m", "nnabla", "plugins"], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "cpu" in out.stdout and "nnabla-ext-cpu" in out.stdout
