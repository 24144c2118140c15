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


DEVICE_PATHS = """
import numpy as np, nnabla as nn, nnabla.functions as F
from nnabla.ext_utils import get_extension_context
from nnabla_ext.cuda.kernels import transpose
from nnabla_ext.cudnn import legacy, norm_graphs
rng = np.random.RandomState(0)
x = rng.randn(4, 3, 8, 8).astype(np.float32)
outs = []
for name in ("cpu", "cudnn"):
    with nn.context_scope(get_extension_context(name)):
        xv = nn.Variable.from_numpy_array(x, need_grad=True)
        mean = nn.Variable.from_numpy_array(np.zeros((1, 3, 1, 1)))
        var = nn.Variable.from_numpy_array(np.ones((1, 3, 1, 1)))
        beta = nn.Variable.from_numpy_array(np.zeros((1, 3, 1, 1)), need_grad=True)
        gamma = nn.Variable.from_numpy_array(np.ones((1, 3, 1, 1)), need_grad=True)
        h = F.batch_normalization(xv, beta, gamma, mean, var, batch_stat=True)
        h = F.softmax(F.average_pooling(F.max_pooling(h, (2, 2)), (2, 2)), axis=1)
        y = F.sum(F.transpose(h, (0, 2, 3, 1)) ** 2)
        y.forward()
        y.backward()
        outs.append([y.d.copy(), xv.g.copy(), mean.d.copy(), var.d.copy()])
for a, b in zip(*outs):
    np.testing.assert_allclose(a, b, rtol=2e-3, atol=1e-4)
assert transpose.COUNTS["strided_copies"] == 0 and transpose.COUNTS["handles"] == 1, \\
    transpose.COUNTS
assert legacy.COUNTS["handles"] == 1 and norm_graphs.COUNTS["finalized"] >= 2, \\
    (legacy.COUNTS, norm_graphs.COUNTS)
print("ok")
"""


def test_cutensor_and_cudnn_paths_execute_on_the_device_and_match_the_cpu():
    out = _run("-c", DEVICE_PATHS)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]


def test_the_tutorials_train_in_the_cudnn_context_as_on_the_cpu():
    """tests/tutorials' MLP and CNN training loops on cudnn, against the CPU run."""
    out = _run("tests/cuda/tutorials_on_device.py", "cudnn")
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]


UPSTREAM_ENV = "NNABLA_UPSTREAM_SOURCE"


@pytest.mark.skipif(not os.environ.get(UPSTREAM_ENV),
                    reason=f"set {UPSTREAM_ENV} to a clone of sony/nnabla to run its function "
                           "and solver tests in the cudnn context")
def test_upstream_function_and_solver_tests_pass_in_the_cudnn_context(tmp_path):
    env = dict(os.environ, NNABLA_CUDA_EMULATE="0", NNABLA_UPSTREAM_CONTEXTS="cudnn",
               PYTHONPATH=str(ROOT / "plugins" / "nnabla_ext_cuda" / "tools" / "upstream"))
    out = subprocess.run([sys.executable, "tools/upstream_conformance.py",
                          os.environ[UPSTREAM_ENV], "--groups", "function", "solver",
                          "--out", str(tmp_path)], capture_output=True, text=True, env=env,
                         cwd=ROOT, timeout=4 * 3600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    total = [line for line in out.stdout.splitlines() if line.startswith("TOTAL")]
    assert total and total[0].split()[2:4] == ["0", "0"], out.stdout[-6000:]  # no fail/error
