"""Without CuPy, a driver or a device: ``import nnabla`` works silently, the plugins are
listed as failed with the reason, and asking for the backend raises naming it."""
import os
import subprocess
import sys
import textwrap

import pytest

FAKE_CUPY = {
    "missing": "raise ImportError(\"No module named 'cupy'\")\n",
    "no_driver": textwrap.dedent("""
        class _Runtime:
            @staticmethod
            def getDeviceCount():
                raise RuntimeError('cudaErrorNoDevice: no CUDA-capable device is detected')
        class cuda:
            runtime = _Runtime
        __version__ = '14.0.0'
    """),
    "no_device": textwrap.dedent("""
        class _Runtime:
            @staticmethod
            def getDeviceCount():
                return 0
        class cuda:
            runtime = _Runtime
        __version__ = '14.0.0'
    """),
}
REASONS = {"missing": "CuPy cannot be imported (No module named 'cupy'); install it with "
                      "`pip install 'cupy-cuda13x[ctk]'`",
           "no_driver": "no usable CUDA driver: cudaErrorNoDevice: no CUDA-capable device",
           "no_device": "no CUDA device found; check the driver and the devices with "
                        "`nvidia-smi`"}
PROBE = textwrap.dedent("""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        import nnabla
        import nnabla_ext.cuda
    print(len(caught))
    print(nnabla_ext.cuda.available()[1])
    print(nnabla_ext.cuda.get_devices())
    from nnabla.ext_utils import get_extension_context
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            get_extension_context('cudnn', device_id='0', type_config='half')
        except ValueError as e:
            print(e)
""")


def _env(tmp_path, kind):
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(FAKE_CUPY[kind])
    env = {k: v for k, v in os.environ.items() if k != "NNABLA_CUDA_EMULATE"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path)] + [p for p in env.get(
        "PYTHONPATH", "").split(os.pathsep) if p])
    return env


@pytest.mark.parametrize("kind", sorted(FAKE_CUPY))
def test_import_is_silent_and_asking_for_cudnn_names_the_reason(tmp_path, kind):
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         env=_env(tmp_path, kind), timeout=120)
    assert out.returncode == 0, out.stderr
    warned, reason, devices, error = out.stdout.splitlines()[:4]
    assert warned == "0" and devices == "[]"
    assert REASONS[kind] in reason
    assert "backend 'cudnn' is not available" in error and REASONS[kind] in error


@pytest.mark.parametrize("kind", ["missing", "no_driver"])
def test_nnabla_cli_plugins_lists_both_plugins_as_failed_with_the_reason(tmp_path, kind):
    out = subprocess.run([sys.executable, "-m", "nnabla", "plugins"], capture_output=True,
                         text=True, env=_env(tmp_path, kind), timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {line.split()[0]: line for line in out.stdout.splitlines()[1:] if line.strip()}
    for name, dist in (("cuda", "nnabla-ext-cuda"), ("cudnn", "nnabla-ext-cudnn")):
        if name == "cudnn" and "cudnn" not in rows:
            continue                   # nnabla-ext-cudnn not installed
        assert dist in rows[name] and " failed " in rows[name]
        assert "CudaUnavailableError" in rows[name] and REASONS[kind] in rows[name]
    assert "cpu" in rows and " active " in rows["cpu"]
    assert "Traceback" not in out.stderr
