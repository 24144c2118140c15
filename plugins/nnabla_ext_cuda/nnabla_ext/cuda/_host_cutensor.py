"""The emulation's cuTENSOR: CuPy's low-level binding (``cupy_backends.cuda.libs.cutensor``)
for the calls the transpose kernel makes, run with numpy on the emulated device memory.

As the library does, it reads extents, strides and modes from host pointers when a
descriptor is created, refuses data pointers not aligned as their descriptor promised, and
permutes ``B = alpha * A`` by mode labels. It counts what it creates (tests read
:data:`CREATED`), so cache behaviour is checked without a device.
"""
from __future__ import annotations

import ctypes
import itertools

import numpy as np

OP_IDENTITY = 1
ALGO_DEFAULT = -1
JIT_MODE_NONE = 0
COMPUTE_DESC_16F = 1
COMPUTE_DESC_32F = 4
COMPUTE_DESC_64F = 16
_CUDA_DTYPES = {0: np.float32, 1: np.float64, 2: np.float16}
CREATED = {"handles": 0, "descriptors": 0, "operations": 0, "plans": 0}


class CuTensorError(RuntimeError):
    """A failed emulated cuTENSOR call (the library returns an error status)."""


_objects = {}
_ids = itertools.count(1)


def _new(kind, **fields):
    key = next(_ids)
    _objects[key] = dict(kind=kind, **fields)
    return key


def _get(key, kind):
    found = _objects.get(key)
    if found is None or found["kind"] != kind:
        raise CuTensorError(f"CUTENSOR_STATUS_INVALID_VALUE: {key} is not a live {kind}")
    return found


def _read(ptr, ctype, n):
    return list((ctype * n).from_address(ptr)) if n else []


def get_version():
    return 20800


def create():
    CREATED["handles"] += 1
    return _new("handle")


def destroy(handle):
    _objects.pop(handle, None)


def createTensorDescriptor(handle, numModes, extent, stride, dataType, alignmentRequirement):
    _get(handle, "handle")
    if dataType not in _CUDA_DTYPES:
        raise CuTensorError(f"CUTENSOR_STATUS_NOT_SUPPORTED: data type {dataType}")
    CREATED["descriptors"] += 1
    return _new("descriptor", extent=_read(extent, ctypes.c_int64, numModes),
                stride=_read(stride, ctypes.c_int64, numModes),
                dtype=np.dtype(_CUDA_DTYPES[dataType]), alignment=alignmentRequirement)


def createPermutation(handle, descA, modeA, opA, descB, modeB, descCompute):
    _get(handle, "handle")
    a, b = _get(descA, "descriptor"), _get(descB, "descriptor")
    ma = _read(modeA, ctypes.c_int32, len(a["extent"]))
    mb = _read(modeB, ctypes.c_int32, len(b["extent"]))
    if sorted(ma) != sorted(mb) or any(
            a["extent"][ma.index(m)] != b["extent"][i] for i, m in enumerate(mb)):
        raise CuTensorError("CUTENSOR_STATUS_INVALID_VALUE: modes or extents of A and B "
                            "do not match")
    if (descCompute == COMPUTE_DESC_64F) != (a["dtype"] == np.float64):
        raise CuTensorError("CUTENSOR_STATUS_NOT_SUPPORTED: float64 data needs the 64F "
                            "compute descriptor and other data a narrower one")
    CREATED["operations"] += 1
    return _new("operation", a=a, b=b, axes=[ma.index(m) for m in mb], op=opA,
                compute=descCompute)


def createPlanPreference(handle, algo, jitMode):
    return _new("preference", algo=algo, jit=jitMode)


def createPlan(handle, desc, pref, workspaceSizeLimit):
    _get(handle, "handle")
    _get(pref, "preference")
    CREATED["plans"] += 1
    return _new("plan", operation=_get(desc, "operation"))


def _view(ptr, desc):
    d = desc["dtype"]
    if ptr % desc["alignment"]:
        raise CuTensorError(f"CUTENSOR_STATUS_INVALID_VALUE: pointer {ptr:#x} is not aligned "
                            f"to {desc['alignment']} bytes as its descriptor requires")
    span = sum((e - 1) * s for e, s in zip(desc["extent"], desc["stride"])) + 1
    buf = (ctypes.c_char * (span * d.itemsize)).from_address(ptr)
    flat = np.frombuffer(buf, dtype=d)
    return np.lib.stride_tricks.as_strided(
        flat, desc["extent"], [s * d.itemsize for s in desc["stride"]], writeable=True)


def permute(handle, plan, alpha, A, B):
    _get(handle, "handle")
    op = _get(plan, "plan")["operation"]
    scalar = ctypes.c_double if op["compute"] == COMPUTE_DESC_64F else ctypes.c_float
    scale = scalar.from_address(alpha).value
    a, b = _view(A, op["a"]), _view(B, op["b"])
    b[...] = (np.transpose(a, op["axes"]) * scale).astype(b.dtype)
