"""The emulation's CUDA runtime: raw kernels compiled for the host, and no-op devices/streams.

A raw kernel's CUDA C++ source is compiled with the host C++ compiler behind a small shim
(``__global__`` is a plain function, ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` are
globals, atomics are plain read-modify-writes) and a generated launcher that runs every
thread of the launch grid one after the other. That is faithful for the kernels this plugin
writes (each thread owns its outputs, or accumulates through ``atomicAdd``) and refuses the
rest: a source using ``__syncthreads``, ``__shared__`` or warp intrinsics is rejected, since a
serial run would not show what a GPU does with it.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import numpy as np

SHIM = r"""
#include <cmath>
#include <cstdint>
#include <cfloat>
#include <climits>
#include <algorithm>
struct __nnabla_dim3 { unsigned int x, y, z; };
static __nnabla_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
template <class T> static inline T atomicAdd(T* p, T v) { T old = *p; *p += v; return old; }
template <class T> static inline T atomicMax(T* p, T v) {
  T old = *p; if (v > old) *p = v; return old; }
template <class T> static inline T atomicMin(T* p, T v) {
  T old = *p; if (v < old) *p = v; return old; }
#define __expf expf
#define __logf logf
#define __fdividef(a, b) ((a) / (b))
static inline float __nnabla_rsqrtf(float x) { return 1.0f / std::sqrt(x); }
#define rsqrtf __nnabla_rsqrtf
#include <cstring>
static inline float __int_as_float(unsigned int i) {
  float f; std::memcpy(&f, &i, 4); return f; }
static inline int __float_as_int(float f) {
  int i; std::memcpy(&i, &f, 4); return i; }
using std::min; using std::max;
"""
_UNSUPPORTED = re.compile(r"__syncthreads|__shared__|__shfl|__ballot|__syncwarp|cooperative_groups")
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_CTYPES = {"float": ctypes.c_float, "double": ctypes.c_double, "int": ctypes.c_int,
           "unsigned int": ctypes.c_uint, "long long": ctypes.c_longlong,
           "int64_t": ctypes.c_int64, "long long int": ctypes.c_longlong, "bool": ctypes.c_bool,
           "unsigned long long": ctypes.c_ulonglong, "size_t": ctypes.c_size_t}
_lock = threading.Lock()
_libraries = {}
COMPILATIONS = {"count": 0}      # how many sources were compiled (tests read this)


def kernel_signatures(source):
    """``{name: [(type, parameter name), ...]}`` of the ``extern "C" __global__`` kernels."""
    found = {}
    for name, params in _KERNEL.findall(source):
        parsed = []
        for param in filter(None, (p.strip() for p in params.split(","))):
            words = param.replace("*", " * ").split()
            parsed.append((" ".join(words[:-1]), words[-1]))
        found[name] = parsed
    return found


def _launcher(name, params):
    # loop variables and sizes carry a prefix no kernel parameter uses
    decl = "".join(f", {t} {n}" for t, n in params)
    names = ", ".join(n for _, n in params)
    return (f'extern "C" void __launch_{name}(unsigned __gx, unsigned __gy, unsigned __gz, '
            f"unsigned __bx, unsigned __by, unsigned __bz{decl}) {{\n"
            "  gridDim = {__gx, __gy, __gz}; blockDim = {__bx, __by, __bz};\n"
            "  for (unsigned __z = 0; __z < __gz; ++__z)\n"
            "  for (unsigned __y = 0; __y < __gy; ++__y)\n"
            "  for (unsigned __x = 0; __x < __gx; ++__x)\n"
            "  for (unsigned __k = 0; __k < __bz; ++__k)\n"
            "  for (unsigned __j = 0; __j < __by; ++__j)\n"
            "  for (unsigned __i = 0; __i < __bx; ++__i) {\n"
            "    blockIdx = {__x, __y, __z}; threadIdx = {__i, __j, __k};\n"
            f"    {name}({names});\n  }}\n}}\n")


def _compile(source):
    if _UNSUPPORTED.search(source):
        raise NotImplementedError("the emulation runs kernels serially and cannot run one "
                                  "using shared memory, barriers or warp intrinsics")
    signatures = kernel_signatures(source)
    text = SHIM + source + "\n" + "".join(_launcher(n, p) for n, p in signatures.items())
    key = hashlib.sha256(text.encode()).hexdigest()[:24]
    with _lock:
        if key in _libraries:
            return _libraries[key], signatures
        folder = os.path.join(tempfile.gettempdir(), f"nnabla_cuda_emulation_{os.getuid()}")
        os.makedirs(folder, exist_ok=True)
        lib_path = os.path.join(folder, f"{key}.so")
        if not os.path.exists(lib_path):
            compiler = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
            if not compiler:
                raise RuntimeError("the CUDA emulation compiles raw kernels for the host and "
                                   "needs a C++ compiler (set CXX)")
            src_path = os.path.join(folder, f"{key}.cpp")
            with open(src_path + ".tmp", "w") as f:
                f.write(text)
            os.replace(src_path + ".tmp", src_path)
            tmp_lib = lib_path + f".{os.getpid()}.tmp"
            out = subprocess.run([compiler, "-std=c++17", "-O1", "-shared", "-fPIC", "-w",
                                  "-x", "c++", src_path, "-o", tmp_lib],
                                 capture_output=True, text=True)
            if out.returncode:
                raise RuntimeError(f"host compilation of a raw kernel failed:\n{out.stderr}")
            os.replace(tmp_lib, lib_path)
            COMPILATIONS["count"] += 1
        lib = ctypes.CDLL(lib_path)
        _libraries[key] = lib
    return lib, signatures


def _ctype(type_name):
    if "*" in type_name:
        return ctypes.c_void_p
    base = type_name.replace("const", "").strip()
    try:
        return _CTYPES[base]
    except KeyError:
        raise TypeError(f"emulated raw kernel: parameter type {type_name!r} is not "
                        f"supported (use {sorted(_CTYPES)} or pointers)") from None


class RawKernel:
    """``cupy.RawKernel`` of the emulation: compiled for the host on first launch."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 *, enable_cooperative_groups=False, jitify=False):
        self.code, self.name, self.options = code, name, tuple(options)
        self._function = None

    def _load(self):
        if self._function is None:
            lib, signatures = _compile(self.code)
            if self.name not in signatures:
                raise AttributeError(f"raw kernel {self.name!r} is not an extern \"C\" "
                                     f"__global__ function of its source")
            params = signatures[self.name]
            function = getattr(lib, f"__launch_{self.name}")
            function.argtypes = [ctypes.c_uint] * 6 + [_ctype(t) for t, _ in params]
            function.restype = None
            self._function, self._params = function, params
        return self._function

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None):
        function = self._load()
        if len(args) != len(self._params):
            raise TypeError(f"raw kernel {self.name}: {len(args)} arguments given; it takes "
                            f"{len(self._params)}")
        grid = tuple(grid) + (1,) * (3 - len(grid))
        block = tuple(block) + (1,) * (3 - len(block))
        values = [_argument(self.name, a, t) for a, (t, _) in zip(args, self._params)]
        from .emulation import ACTIVITY
        ACTIVITY["ops"][current_device()] += 1
        function(*grid, *block, *values)


# The numpy type each C type of a kernel parameter takes: CuPy passes a numpy scalar as its
# own C type and an array as a pointer, so a mismatch (a Python int for an ``int``, a
# float64 array for a ``float*``) reads garbage on a GPU. The emulation refuses it.
C_TYPES = {"float": np.float32, "double": np.float64, "int": np.int32,
           "unsigned int": np.uint32, "long long": np.int64, "long long int": np.int64,
           "int64_t": np.int64, "unsigned long long": np.uint64, "size_t": np.uint64,
           "bool": np.bool_, "__half": np.float16}


def _base_type(type_name):
    return " ".join(w for w in type_name.replace("*", " ").split()
                    if w not in ("const", "__restrict__", "__restrict"))


def _argument(kernel, value, type_name):
    from .emulation import ndarray
    wanted = C_TYPES.get(_base_type(type_name))
    if isinstance(value, ndarray):
        if "*" not in type_name:
            raise TypeError(f"raw kernel {kernel}: an array given for parameter of type "
                            f"{type_name!r}")
        if value._dev != current_device():
            raise ValueError(f"raw kernel {kernel}: an array of device {value._dev} given "
                             f"while device {current_device()} is current")
        a = value._a
        if wanted is not None and a.dtype != wanted:
            raise TypeError(f"raw kernel {kernel}: a {a.dtype} array given for parameter "
                            f"{type_name!r} (needs {np.dtype(wanted)})")
        if not a.flags.c_contiguous:
            raise ValueError(f"raw kernel {kernel}: a non-contiguous array given; pass "
                             "cupy.ascontiguousarray(a)")
        return a.ctypes.data
    if isinstance(value, np.ndarray):
        raise TypeError(f"raw kernel {kernel}: a numpy array given; kernels take device "
                        "arrays")
    if "*" in type_name:
        raise TypeError(f"raw kernel {kernel}: {type(value).__name__} given for pointer "
                        f"parameter {type_name!r}")
    if not isinstance(value, np.generic) or value.dtype != wanted:
        raise TypeError(f"raw kernel {kernel}: {type(value).__name__} {value!r} given for "
                        f"parameter {type_name!r}; pass numpy.{np.dtype(wanted).name}(...) "
                        "(CuPy passes a Python int as long long and a float as double)")
    return value.item()


class RawModule:
    """``cupy.RawModule`` of the emulation."""

    def __init__(self, code=None, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, *, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False):
        self.code, self.options = code, tuple(options)

    def get_function(self, name):
        return RawKernel(self.code, name, self.options)


DEVICE_COUNT_ENV = "NNABLA_CUDA_EMULATE_DEVICES"


def device_count():
    """How many devices the emulation has (``NNABLA_CUDA_EMULATE_DEVICES``, default 2, so
    device selection is exercised)."""
    return max(1, int(os.environ.get(DEVICE_COUNT_ENV, "2")))


_current = threading.local()


def current_device():
    """The id of the emulated current device (per thread, as CUDA's), 0 at first."""
    return getattr(_current, "id", 0)


class Device:
    """An emulated device: ``use()`` and ``with`` make it current, as CuPy's do. Arrays
    record the device they were made on, and operations refuse arrays of another device
    (:mod:`.emulation`)."""

    def __init__(self, device=None):
        self.id = current_device() if device is None else int(device)
        if not 0 <= self.id < device_count():
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {self.id} "
                               f"(the emulation has {device_count()} devices)")
        self._previous = []

    def use(self):
        _current.id = self.id
        return self

    def synchronize(self):
        """Emulated kernels run synchronously."""

    def __enter__(self):
        self._previous.append(current_device())
        _current.id = self.id
        return self

    def __exit__(self, *exc):
        _current.id = self._previous.pop()
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id} (emulated)>"

    @property
    def compute_capability(self):
        return "80"


class Stream:
    """An emulated stream (everything is synchronous); ``ptr`` 0 is the null stream."""

    null = None
    _count = 0

    def __init__(self, null=False, non_blocking=False, ptds=False):
        Stream._count += 1
        self.ptr = 0 if null else Stream._count

    def synchronize(self):
        pass

    def wait_event(self, event):
        """Work queued later waits for ``event`` (already complete when emulated)."""

    def use(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


Stream.null = Stream(null=True)


class Event:
    """An emulated event: ``record`` notes the host time (work is synchronous)."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.time = None

    def record(self, stream=None):
        self.time = time.perf_counter()

    def synchronize(self):
        pass

    @property
    def done(self):
        return True


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events."""
    if start_event.time is None or end_event.time is None:
        raise RuntimeError("cudaErrorInvalidResourceHandle: an event was not recorded")
    return (end_event.time - start_event.time) * 1000.0


def get_current_stream():
    return Stream.null


class MemoryPool:
    """An emulated memory pool: numpy owns the memory; the counters stay zero."""

    def __init__(self, allocator=None):
        self.freed = 0

    def malloc(self, size):
        raise NotImplementedError("the emulated memory pool does not hand out raw memory")

    def free_all_blocks(self, stream=None):
        self.freed += 1

    def used_bytes(self):
        return 0

    def free_bytes(self):
        return 0

    def n_free_blocks(self):
        return 0

    def total_bytes(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0


_pool = MemoryPool()


def get_default_memory_pool():
    return _pool


def set_allocator(allocator=None):
    """The emulation allocates with numpy whatever the allocator."""


class runtime:
    """The parts of ``cupy.cuda.runtime`` the plugin calls."""

    @staticmethod
    def getDeviceCount():
        return device_count()

    @staticmethod
    def getDevice():
        return current_device()

    @staticmethod
    def setDevice(device):
        Device(device).use()

    @staticmethod
    def deviceSynchronize():
        pass

    @staticmethod
    def runtimeGetVersion():
        return 13000

    @staticmethod
    def driverGetVersion():
        return 13000

    @staticmethod
    def getDeviceProperties(device):
        return {"name": b"emulated device (numpy)", "totalGlobalMem": 0, "major": 8,
                "minor": 0}

    @staticmethod
    def memGetInfo():
        return (0, 0)
