"""On a CUDA device (marked ``gpu``; skipped with the reason elsewhere): every function case,
solver rule and graph check of the backend kit on real CuPy and cuDNN against the CPU.

Run on a GPU machine with ``python -m pytest tests/cuda -m gpu`` (the emulation is not used:
each check runs in a subprocess with ``NNABLA_CUDA_EMULATE=0``).
"""
import os
import pathlib
import subprocess
import sys

import pytest


def device_reason():
    """``None`` when real CuPy sees a CUDA device, else why not (the skip reason)."""
    from nnabla_ext.cuda import _device
    try:
        _device._probe_cupy()
    except _device.CudaUnavailableError as e:
        return f"no CUDA device: {e}"
    return None


ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(device_reason() is not None, reason=str(device_reason()))]


def _run(*args, timeout=3600):
    env = dict(os.environ, NNABLA_CUDA_EMULATE="0")
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=timeout)


@pytest.mark.parametrize("backend,type_config", [("cuda", "float"), ("cuda", "half"),
                                                 ("cudnn", "float"), ("cudnn", "half")])
def test_the_backend_kit_passes_on_the_device(backend, type_config):
    out = _run("-m", "nnabla.testing.backend_kit", backend, "--type-config", type_config)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]


def test_the_function_suite_passes_in_the_cudnn_context():
    out = _run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/functions",
               "--backend", "cudnn")
    assert out.returncode == 0, out.stdout[-6000:]


def test_raw_kernels_compile_and_load_on_the_device():
    out = _run("-c", "import cupy; from nnabla_ext.cuda.kernels import raw\n"
                     "for s in raw.sources(): raw.module(cupy, s)")
    assert out.returncode == 0, out.stderr
