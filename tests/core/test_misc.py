"""Top-level helpers: config, dtypes, testing, logger, seed, auto-forward switches, CLI."""
import subprocess
import sys

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def test_config_reads_nnabla_conf_from_the_current_directory(tmp_path, monkeypatch):
    from nnabla import config
    (tmp_path / "nnabla.conf").write_text("[LOG]\nlog_console_level = DEBUG\n")
    monkeypatch.chdir(tmp_path)
    assert config.search_paths()[-1] == str(tmp_path / "nnabla.conf")
    assert config.load().get("LOG", "log_console_level") == "DEBUG"
    monkeypatch.chdir("/")
    assert config.load().get("LOG", "log_console_level") == "INFO"


def test_dtypes_and_testing_helpers():
    import nnabla.dtypes as dt
    from nnabla.testing import assert_allclose
    assert dt.float is np.float32 and dt.half is np.float16
    v = nn.Variable.from_numpy_array(np.array([1.0, 2.0]))
    assert_allclose(v, [1.0, 2.0])
    assert_allclose(v.data, np.array([1.0, 2.0]))
    with pytest.raises(AssertionError):
        assert_allclose(v, [1.0, 2.5])


def test_logger_is_the_nnabla_logger():
    from nnabla.logger import logger
    assert logger.name == "nnabla" and nn.logger is logger


def test_seed_reproduces_parameter_initialisation_and_random_functions():
    import nnabla.parametric_functions as PF
    values = []
    for _ in range(2):
        nn.clear_parameters()
        nn.seed(42)
        PF.affine(nn.Variable((2, 3)), 4)
        r = F.rand(shape=(3,))
        r.forward()
        values.append((nn.get_parameters()["affine/W"].d.copy(), r.d.copy()))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])
    lim = np.sqrt(6.0 / (3 + 4))
    np.testing.assert_allclose(values[0][0],
                               np.random.RandomState(42).uniform(-lim, lim, (3, 4)), rtol=1e-6)
    nn.clear_parameters()


def test_set_auto_forward_switches_globally_and_scope_restores():
    x = nn.Variable.from_numpy_array(np.array([1.0]))
    nn.set_auto_forward(True)
    try:
        assert nn.get_auto_forward()
        y = F.add_scalar(x, 1.0)
        assert y.d[0] == 2.0
        with nn.auto_forward(False):
            assert not nn.get_auto_forward()
    finally:
        nn.set_auto_forward(False)
    assert not nn.get_auto_forward()


def test_no_grad_affects_parameters_of_parametric_functions_only():
    import nnabla.parametric_functions as PF
    nn.clear_parameters()
    x = nn.Variable((2, 3), need_grad=True)
    with nn.no_grad():
        y = PF.affine(x, 2)
        z = F.add_scalar(x, 1.0)
    assert not y.need_grad or y.parent.inputs[1].need_grad is False
    assert z.need_grad
    nn.clear_parameters()


def test_prefer_cached_array_orders_the_array_classes_and_reset_restores_them():
    declared = nn.array_classes()
    assert sorted(declared) == ["CpuArray", "CpuCachedArray"]
    try:
        nn.prefer_cached_array(False)
        assert nn.array_classes() == ["CpuArray", "CpuCachedArray"]
        nn.prefer_cached_array(True)
        assert nn.array_classes() == ["CpuCachedArray", "CpuArray"]
    finally:
        nn.reset_array_preference()
    assert nn.array_classes() == declared


def test_set_global_recompute_is_the_default_of_new_variables_only():
    before = nn.Variable((2,))
    try:
        nn.set_global_recompute(True)
        assert nn.get_global_recompute() is True
        assert nn.Variable((2,)).recompute and not before.recompute
    finally:
        nn.set_global_recompute(False)
    assert nn.get_global_recompute() is False and not nn.Variable((2,)).recompute


def test_nnabla_cli_lists_functions_and_version():
    out = subprocess.run([sys.executable, "-m", "nnabla", "function_info"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "Affine" in out.stdout.splitlines()
    out = subprocess.run([sys.executable, "-m", "nnabla", "version"], capture_output=True,
                         text=True)
    assert out.stdout.splitlines()[1].startswith("Version:")


@pytest.mark.conformance
def test_every_issue_function_exists_with_nnablas_signature():
    import inspect
    import pathlib
    tsv = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_signatures.tsv"
    expected = {}
    for line in tsv.read_text().splitlines():
        parts = line.split("\t")
        if parts[0] == "nnabla.functions":
            expected[parts[1]] = parts[2]
    assert len(expected) == 237
    assert sorted(name for name in expected if not hasattr(F, name)) == []
    wrong = {name: (str(inspect.signature(getattr(F, name))), sig)
             for name, sig in expected.items()
             if str(inspect.signature(getattr(F, name))) != sig}
    assert not wrong
