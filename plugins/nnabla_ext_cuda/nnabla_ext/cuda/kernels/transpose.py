"""Transpose by cuTENSOR's permutation, with nnabla-ext-cuda's caches.

As the nnabla 1.32 release notes describe for cuTENSOR: one library handle per device,
created at the first transpose on it and reused by every later one, and one plan per
(device, data type, shape, permutation), built once. Where cuTENSOR is not installed
(``pip install cutensor-cu13``, a dependency of the plugin) or a data type is not one it permutes
(float32, float16, float64), the transpose is CuPy's strided copy, as the generic kernel
does; the reason is logged once. On the emulation, :mod:`nnabla_ext.cuda._host_cutensor`
stands in for CuPy's binding, so the call sequence and the caches run without a device.
"""
from __future__ import annotations

import logging
import threading

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC

logger = logging.getLogger(__name__)
# cudaDataType_t of the types cuTENSOR permutes here
CUDA_DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2}
ALIGNMENT = 256                   # CuPy's pool hands out 512-byte aligned blocks
COUNTS = {"handles": 0, "plans": 0, "hits": 0, "strided_copies": 0}   # tests read these

_handles = {}
_plans = {}
_lock = threading.Lock()
_unavailable = []


def library():
    """CuPy's cuTENSOR binding (or the emulation's), or ``None`` with the reason logged."""
    import nnabla_ext.cuda
    rt = nnabla_ext.cuda.runtime()
    if rt.emulated:
        from .. import _host_cutensor
        return _host_cutensor
    if _unavailable:
        return None
    try:
        from cupy_backends.cuda.libs import cutensor
        cutensor.get_version()
    except Exception as e:  # noqa: BLE001 - ImportError, or the library fails to load
        _unavailable.append(f"{type(e).__name__}: {e}")
        logger.info("nnabla_ext.cuda: transposes use CuPy's strided copy: cuTENSOR is not "
                    "usable (%s); install it with `pip install cutensor-cu13`", e)
        return None
    return cutensor


def handle(lib, device):
    """The cuTENSOR handle of ``device``, created at its first use."""
    with _lock:
        found = _handles.get((id(lib), device))
        if found is None:
            found = _handles[(id(lib), device)] = lib.create()
            COUNTS["handles"] += 1
        return found


class Plan:
    """A permutation plan and what must outlive it (descriptors, mode arrays)."""

    def __init__(self, lib, h, dtype, shape, axes):
        out_shape = [shape[a] for a in axes]
        self.keep = []

        def descriptor(extents):
            ext = np.asarray(extents, dtype=np.int64)
            strides = np.ones(len(extents), dtype=np.int64)
            for i in range(len(extents) - 2, -1, -1):
                strides[i] = strides[i + 1] * extents[i + 1]
            self.keep += [ext, strides]
            return lib.createTensorDescriptor(h, len(extents), ext.ctypes.data,
                                              strides.ctypes.data, CUDA_DTYPES[dtype],
                                              ALIGNMENT)

        mode_a = np.arange(len(shape), dtype=np.int32)
        mode_b = np.asarray(axes, dtype=np.int32)
        self.keep += [mode_a, mode_b]
        desc_a, desc_b = descriptor(list(shape)), descriptor(out_shape)
        # float64 data computes (and scales by alpha) in float64, the others in float32
        double = dtype == np.dtype(np.float64)
        op = lib.createPermutation(h, desc_a, mode_a.ctypes.data, lib.OP_IDENTITY, desc_b,
                                   mode_b.ctypes.data,
                                   lib.COMPUTE_DESC_64F if double else lib.COMPUTE_DESC_32F)
        pref = lib.createPlanPreference(h, lib.ALGO_DEFAULT, lib.JIT_MODE_NONE)
        self.plan = lib.createPlan(h, op, pref, 0)
        self.alpha = np.ones(1, dtype=np.float64 if double else np.float32)


def plan(lib, device, dtype, shape, axes):
    """The cached :class:`Plan` of permuting ``shape`` by ``axes`` on ``device``."""
    key = (id(lib), device, dtype, tuple(shape), tuple(axes))
    found = _plans.get(key)
    if found is not None:
        COUNTS["hits"] += 1
        return found
    h = handle(lib, device)
    with _lock:
        found = _plans.get(key)
        if found is None:
            found = _plans[key] = Plan(lib, h, dtype, shape, axes)
            COUNTS["plans"] += 1
        else:
            COUNTS["hits"] += 1
        return found


def _pointer(a):
    return a.__cuda_array_interface__["data"][0]


def _aligned(xp, a, copy=True):
    """``a`` contiguous at an address aligned to :data:`ALIGNMENT` (copied if it is not;
    CuPy's pool blocks are, so only offset views are copied on a device)."""
    a = xp.ascontiguousarray(a)
    offset = -_pointer(a) % ALIGNMENT
    if offset:
        buffer = xp.empty(a.nbytes + ALIGNMENT, dtype=xp.uint8)
        offset = -_pointer(buffer) % ALIGNMENT
        b = buffer[offset:offset + a.nbytes].view(a.dtype).reshape(a.shape)
        if copy:
            b[...] = a
        a = b
    return a


def permute(xp, x, axes):
    """``x`` transposed by ``axes``, contiguous: by cuTENSOR where it applies."""
    lib = library()
    dtype = np.dtype(x.dtype)
    if lib is None or dtype not in CUDA_DTYPES or x.ndim < 2 or x.size == 0:
        COUNTS["strided_copies"] += 1
        return xp.ascontiguousarray(xp.transpose(x, axes))
    device = xp.cupy.cuda.Device().id
    p = plan(lib, device, dtype, x.shape, axes)
    x = _aligned(xp, x)
    y = _aligned(xp, xp.empty(tuple(x.shape[a] for a in axes), dtype=x.dtype), copy=False)
    lib.permute(handle(lib, device), p.plan, p.alpha.ctypes.data, _pointer(x), _pointer(y))
    return y


def clear():
    """Forget every plan (handles are kept)."""
    with _lock:
        _plans.clear()


class Transpose(GENERIC["Transpose"]):
    """Transpose forward and backward by cached cuTENSOR permutation plans."""

    def forward(self, xs):
        return (permute(self.xp, xs[0], self.perm),)

    def backward(self, xs, ys, dys, propagate_down):
        return [permute(self.xp, dys[0], self.inverse)]


KERNELS = {"Transpose": Transpose}
