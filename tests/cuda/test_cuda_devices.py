"""Device selection on the emulation (2 emulated devices): a context with ``device_id='1'``
allocates and computes on device 1 whatever device is current, and leaves device 0's
arrays alone; the real-device twin is marked ``gpu``."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
from nnabla.ext_utils import get_extension_context
from nnabla_ext.cuda import _host_cuda, emulation
from nnabla_ext.cuda.kernels import transpose


def _step(ctx, x, w0, b0):
    """One Adam step of a small net (affine, relu, max pooling, transpose); returns the
    loss, the variables and the arrays made."""
    with nn.context_scope(ctx):
        xv = nn.Variable.from_numpy_array(x)
        w = nn.Variable.from_numpy_array(w0, need_grad=True)
        b = nn.Variable.from_numpy_array(b0, need_grad=True)
        h = F.relu(F.affine(xv, w, b)).reshape((2, 1, 4, 4))
        h = F.transpose(F.max_pooling(h, (2, 2)), (0, 2, 3, 1))
        loss = F.mean(h ** 2)
        solver = S.Adam(alpha=0.01)
        solver.set_parameters({"w": w, "b": b})
        loss.forward()
        solver.zero_grad()
        loss.backward()
        solver.update()
    return loss, w, b


def _devices_of(*variables):
    """The device ids of the ``cuda`` heads of the variables' data and gradients."""
    found = set()
    for v in variables:
        for synced in (v.data, v.grad):
            for (fam, _), head in synced._array.heads.items():
                if fam.name == "cuda":
                    found.add(head.device.id)
    return found


def test_a_device_1_context_allocates_and_computes_on_device_1():
    rng = np.random.RandomState(3)
    x, w0, b0 = (rng.randn(2, 5).astype(np.float32), rng.randn(5, 16).astype(np.float32),
                 rng.randn(16).astype(np.float32))
    ctx0 = get_extension_context("cuda", device_id="0")
    ctx1 = get_extension_context("cuda", device_id="1")
    assert _host_cuda.current_device() == 0          # making a context switches nothing
    with nn.context_scope(ctx0):
        a = nn.Variable.from_numpy_array(x)
        y0 = F.tanh(a)
        y0.forward()
    (key0, head0), = [(k, h) for k, h in y0.data._array.heads.items() if k[0].name == "cuda"]
    kept = head0.get()
    made, ops = dict(emulation.ACTIVITY["made"]), dict(emulation.ACTIVITY["ops"])
    handles = transpose.COUNTS["handles"]

    loss, w, b = _step(ctx1, x, w0, b0)
    with nn.context_scope(ctx1):
        y1 = F.tanh(y0.get_unlinked_variable())   # device 0's values, read on device 1
        y1.forward()

    assert emulation.ACTIVITY["made"][0] == made.get(0, 0)     # nothing made on device 0
    assert emulation.ACTIVITY["ops"][0] == ops.get(0, 0)       # nothing computed there
    assert emulation.ACTIVITY["made"][1] > made.get(1, 0)
    assert emulation.ACTIVITY["ops"][1] > ops.get(1, 0)
    assert _devices_of(loss, w, b, y1) == {1}
    assert y0.data._array.heads[key0] is head0 and head0.device.id == 0
    np.testing.assert_array_equal(head0.get(), kept)
    assert _host_cuda.current_device() == 0          # every switch was undone
    assert transpose.COUNTS["handles"] in (handles, handles + 1)   # one more: device 1's

    ref_loss, ref_w, ref_b = _step(get_extension_context("cpu"), x, w0, b0)
    np.testing.assert_allclose(loss.d, ref_loss.d, rtol=1e-6)
    np.testing.assert_allclose(w.d, ref_w.d, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b.d, ref_b.d, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(y1.d, np.tanh(np.tanh(x)), rtol=1e-6)


def test_the_emulation_refuses_arrays_of_another_device():
    cp = emulation.cupy
    a = cp.ones(3, dtype=cp.float32)
    with cp.cuda.Device(1):
        b = cp.ones(3, dtype=cp.float32)
        assert b.device.id == 1 and a.device.id == 0
        with pytest.raises(ValueError, match=r"resides \(0\) is different from the current "
                                             r"device \(1\)"):
            a + b
        c = a.copy()                         # a copy lands on the current device
        assert c.device.id == 1
        np.testing.assert_array_equal((c + b).get(), np.full(3, 2.0))
    with pytest.raises(RuntimeError, match="invalid device ordinal 2"):
        cp.cuda.Device(2)


def test_a_context_on_a_missing_device_is_refused():
    with pytest.raises(ValueError, match=r"device_id.*'2'.*2 CUDA device"):
        get_extension_context("cuda", device_id="2")


def _two_devices_reason():
    """``None`` when real CuPy sees 2 or more devices, else why not (the skip reason)."""
    from nnabla_ext.cuda import _device
    try:
        count = _device._probe_cupy().device_count
    except _device.CudaUnavailableError as e:
        return f"no CUDA device: {e}"
    return None if count >= 2 else f"needs 2 CUDA devices; this machine has {count}"


ON_DEVICE_1 = """
import sys
import numpy as np, cupy, nnabla as nn
sys.path.insert(0, 'tests/cuda')
from test_cuda_devices import _devices_of, _step
from nnabla.ext_utils import get_extension_context
rng = np.random.RandomState(3)
x, w0, b0 = (rng.randn(2, 5).astype(np.float32), rng.randn(5, 16).astype(np.float32),
             rng.randn(16).astype(np.float32))
pool = cupy.get_default_memory_pool()
with cupy.cuda.Device(0):
    before = pool.used_bytes()
for backend in ('cuda', 'cudnn'):
    loss, w, b = _step(get_extension_context(backend, device_id='1'), x, w0, b0)
    assert _devices_of(loss, w, b) == {1}, _devices_of(loss, w, b)
    assert cupy.cuda.runtime.getDevice() == 0
    ref_loss, ref_w, ref_b = _step(get_extension_context('cpu'), x, w0, b0)
    np.testing.assert_allclose(loss.d, ref_loss.d, rtol=1e-5)
    np.testing.assert_allclose(w.d, ref_w.d, rtol=1e-5, atol=1e-6)
with cupy.cuda.Device(0):
    assert pool.used_bytes() == before, (before, pool.used_bytes())
print('ok')
"""


@pytest.mark.gpu
@pytest.mark.skipif(_two_devices_reason() is not None, reason=str(_two_devices_reason()))
def test_a_device_1_context_runs_on_the_second_gpu():
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", ON_DEVICE_1], capture_output=True, text=True,
                         cwd=root, env=dict(os.environ, NNABLA_CUDA_EMULATE="0"), timeout=900)
    assert out.returncode == 0 and "ok" in out.stdout, out.stdout[-3000:] + out.stderr[-3000:]


def test_a_kernels_forward_ufunc_runs_on_its_device_on_every_path():
    # add_scalar declares forward_ufunc: the engine calls it instead of forward, so the
    # plugin's device switch must wrap it too (imperative, auto-forward, static plan)
    ctx1 = get_extension_context("cuda", device_id="1")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    ops0 = emulation.ACTIVITY["ops"].get(0, 0)
    with nn.context_scope(ctx1):
        a = nn.NdArray.from_numpy_array(x)
        for _ in range(2):
            np.testing.assert_array_equal(F.add_scalar(a, 1.5).data, x + 1.5)
        v = nn.Variable.from_numpy_array(x)
        with nn.auto_forward():
            for _ in range(2):
                np.testing.assert_array_equal(F.add_scalar(v, 2.0).d, x + 2.0)
        y = F.mul_scalar(F.add_scalar(v, 1.0), 3.0)
        y.forward()
        assert _devices_of(y) == {1}
        np.testing.assert_array_equal(y.d, (x + 1.0) * 3.0)
    assert emulation.ACTIVITY["ops"].get(0, 0) == ops0     # nothing computed on device 0
    assert _host_cuda.current_device() == 0
