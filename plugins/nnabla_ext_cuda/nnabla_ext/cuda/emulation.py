"""A numpy-backed stand-in for CuPy, strict where CuPy is strict (``NNABLA_CUDA_EMULATE=1``).

It lets the CUDA backend's Python logic (the array family, the generic ``xp`` kernels, the
solver rules, the caches, the routing) run on a machine without a GPU. It is not a
simulator of the device: it checks what the Python code does with the device layer.

What it enforces, as CuPy does:

- Device arrays (:class:`ndarray`) are not numpy arrays: ``numpy.asarray(a)`` raises
  ``TypeError`` (use ``a.get()`` or ``cupy.asnumpy``); mixing a device array with a numpy
  array in an operation or a ``cupy`` function raises ``TypeError``; numpy functions and
  ufuncs applied to device arrays dispatch to ``cupy`` (as CuPy's ``__array_function__``
  and ``__array_ufunc__`` do) and fail for names CuPy lacks.
- The namespace offers only the names the installed CuPy had when
  ``tools/record_cupy_api.py`` recorded them (:mod:`._cupy_api`): ``cupy.errstate`` does not
  exist, ``cupy.linalg.inv`` does.
- Reductions and scalar indexing return 0-d device arrays, not numpy scalars.
- Devices (``NNABLA_CUDA_EMULATE_DEVICES``, default 2): ``cupy.cuda.Device(i)`` makes ``i``
  current; an array belongs to the device current when it was made (``a.device``), and an
  operation on arrays of another device than the current one raises ``ValueError``, as CuPy
  does without peer access (``a.copy()`` copies to the current device). :data:`ACTIVITY`
  counts, per device id, the arrays made (``'made'``) and the operations run (``'ops'``).

Raw CUDA kernels (``RawKernel``/``RawModule``) are compiled for the host with the C++
compiler and run serially over the launch grid (:mod:`._host_cuda`), so their code runs too.

Example:
    >>> from nnabla_ext.cuda.emulation import cupy as cp
    >>> a = cp.arange(3, dtype=cp.float32)
    >>> float((a * 2).sum())
    6.0
    >>> import numpy as np
    >>> np.asarray(a)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: Implicit conversion to a NumPy array is not allowed. ...
"""
from __future__ import annotations

import collections
import functools
import types

import numpy as np

from . import _cupy_api
from ._host_cuda import Device, current_device

__all__ = ["cupy", "ndarray", "asnumpy"]

_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
             "construct a NumPy array explicitly.")
# cupy functions that take host data (numpy arrays, lists) and copy it to the device
_FROM_HOST = frozenset({"asarray", "array", "asanyarray", "ascontiguousarray", "copyto",
                        "asnumpy", "get_array_module", "result_type", "can_cast", "isscalar",
                        "dtype", "finfo", "iinfo", "ndim", "shape", "size"})
_NDARRAY = frozenset(_cupy_api.NDARRAY)
# ndarray methods that work from any current device (transfers, copies to the current one)
_ANY_DEVICE = frozenset({"get", "copy", "set", "tolist", "item"})
ACTIVITY = {"made": collections.Counter(), "ops": collections.Counter()}


class ndarray:
    """A device array of the emulation: numpy memory that refuses to act as numpy."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        self._a = np.empty(shape, dtype, order=order)
        self._dev = current_device()
        ACTIVITY["made"][self._dev] += 1

    @property
    def device(self):
        """The :class:`~._host_cuda.Device` this array lives on."""
        return Device(self._dev)

    # -- numpy interoperation, as CuPy allows it ----------------------------------------------
    def __array__(self, *args, **kwargs):
        raise TypeError(_IMPLICIT)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc.__name__ not in _cupy_api.NAMES:
            return NotImplemented
        if method != "__call__" and method not in _cupy_api.UFUNC_METHODS:
            return NotImplemented
        _check_device_only(ufunc.__name__, inputs, kwargs)
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)))

    def __array_function__(self, func, types_, args, kwargs):
        if func.__name__ not in _cupy_api.NAMES:
            return NotImplemented
        return getattr(cupy, func.__name__)(*args, **kwargs)

    def get(self, stream=None, order="C", out=None):
        """A numpy copy of this array (a device-to-host transfer)."""
        if out is not None:
            out[...] = self._a
            return out
        return np.array(self._a, order=order)

    def set(self, arr, stream=None):
        """Copy the numpy array ``arr`` into this array (a host-to-device transfer)."""
        self._a[...] = arr

    @property
    def base(self):
        base = self._a.base
        return None if base is None else _view(base, self._dev)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self._a.shape, "typestr": self._a.dtype.str, "version": 3,
                "data": (self._a.ctypes.data, False), "strides": self._a.strides}

    def __getattr__(self, name):
        if name not in _NDARRAY:
            raise AttributeError(f"'cupy.ndarray' object has no attribute {name!r}")
        value = getattr(self._a, name)
        if callable(value):
            if name not in _ANY_DEVICE:
                _check_device_only(name, (self,), {})
            return _device_function(value, name)
        return _wrap(value)

    # -- Python protocol -----------------------------------------------------------------------
    def __getitem__(self, key):
        out = self._a[_unwrap(key)]
        return _view(out, self._dev) if isinstance(out, np.ndarray) else _wrap(out)

    def __setitem__(self, key, value):
        _check_devices("__setitem__", (self, key, value), {})   # host values are copied
        self._a[_unwrap(key)] = _unwrap(value)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self._a)))

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def __repr__(self):
        return repr(self._a).replace("array(", "emulated_cupy_array(", 1)

    __str__ = __repr__

    def __copy__(self):
        return _wrap(self._a.copy())

    def __deepcopy__(self, memo):
        return _wrap(self._a.copy())

    def __reduce__(self):
        return (asarray_from_host, (np.array(self._a),))

    def __dlpack__(self, *args, **kwargs):
        raise TypeError("the emulated device array has no DLPack capsule")


def asarray_from_host(host):
    """A device array holding a copy of the numpy array ``host``."""
    return _wrap(np.array(host))


def _binary(name):
    ufunc = getattr(np, name)

    def op(self, other):
        _check_device_only(name, (self, other), {})
        return _wrap(ufunc(self._a, _unwrap(other)))

    def rop(self, other):
        _check_device_only(name, (self, other), {})
        return _wrap(ufunc(_unwrap(other), self._a))

    def iop(self, other):
        _check_device_only(name, (self, other), {})
        ufunc(self._a, _unwrap(other), out=self._a, casting="same_kind")
        return self

    return op, rop, iop


for _dunder, _ufunc in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                        ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                        ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                        ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                        ("lshift", "left_shift"), ("rshift", "right_shift"),
                        ("matmul", "matmul")):
    _op, _rop, _iop = _binary(_ufunc)
    setattr(ndarray, f"__{_dunder}__", _op)
    setattr(ndarray, f"__r{_dunder}__", _rop)
    if _dunder != "matmul":      # CuPy has no __imatmul__
        setattr(ndarray, f"__i{_dunder}__", _iop)
for _dunder, _ufunc in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                        ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
    setattr(ndarray, f"__{_dunder}__", _binary(_ufunc)[0])
for _dunder, _ufunc in (("neg", "negative"), ("pos", "positive"), ("abs", "absolute"),
                        ("invert", "invert")):
    setattr(ndarray, f"__{_dunder}__",
            (lambda u: lambda self: _wrap(u(*_unwrap(_check_device_only(u.__name__,
                                                                       (self,), {})))))(
                getattr(np, _ufunc)))
ndarray.__hash__ = None


def _view(a, device=None):
    out = ndarray.__new__(ndarray)
    out._a = a
    out._dev = current_device() if device is None else device
    ACTIVITY["made"][out._dev] += 1
    return out


def _wrap(value):
    """numpy results as device results: arrays and numpy scalars become device arrays."""
    if isinstance(value, np.ndarray):
        return _view(value)
    if isinstance(value, np.generic) and not isinstance(value, (np.str_, np.bytes_,
                                                                  np.void)):
        return _view(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _unwrap(value):
    if isinstance(value, ndarray):
        return value._a
    if isinstance(value, tuple):
        return tuple(_unwrap(v) for v in value)
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


def _host_arrays(value):
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, (tuple, list)):
        return any(_host_arrays(v) for v in value)
    return False


def _devices(value, found):
    if isinstance(value, ndarray):
        found.add(value._dev)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _devices(v, found)
    return found


def _check_device_only(name, args, kwargs):
    """CuPy refuses numpy arrays where it expects device arrays, and arrays of another
    device than the current one (no peer access). Counts the operation on the current
    device; returns ``args``."""
    if _host_arrays(args) or _host_arrays(tuple(kwargs.values())):
        raise TypeError(f"cupy.{name}: Unsupported type <class 'numpy.ndarray'> (a host "
                        "array given where a device array is expected; use cupy.asarray)")
    return _check_devices(name, args, kwargs)


def _check_devices(name, args, kwargs):
    current = current_device()
    for dev in _devices((args, tuple(kwargs.values())), set()):
        if dev != current:
            raise ValueError(f"cupy.{name}: The device where the array resides ({dev}) is "
                             f"different from the current device ({current}). Peer access "
                             "is unavailable between these devices.")
    ACTIVITY["ops"][current] += 1
    return args


def _device_function(func, name):
    @functools.wraps(func)
    def run(*args, **kwargs):
        if name not in _FROM_HOST:
            _check_device_only(name, args, kwargs)
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))
    return run


class _Ufunc:
    """A CuPy ufunc: callable, with the methods CuPy offers."""

    def __init__(self, ufunc):
        self._ufunc = ufunc
        self.__name__ = ufunc.__name__
        self.nin, self.nout, self.nargs = ufunc.nin, ufunc.nout, ufunc.nargs

    def __call__(self, *args, **kwargs):
        return _device_function(self._ufunc, self.__name__)(*args, **kwargs)

    def __getattr__(self, method):
        if method not in _cupy_api.UFUNC_METHODS:
            raise AttributeError(f"'cupy.ufunc' object has no attribute {method!r}")
        return _device_function(getattr(self._ufunc, method), f"{self.__name__}.{method}")

    def __repr__(self):
        return f"<emulated cupy ufunc '{self.__name__}'>"


class _Namespace(types.ModuleType):
    """``cupy`` or one of its submodules, restricted to the recorded names."""

    def __init__(self, name, host, names, extra=None):
        super().__init__(name)
        self._host, self._names = host, frozenset(names)
        self.__dict__.update(extra or {})

    def __getattr__(self, name):
        if name.startswith("__") or name not in self._names or not hasattr(self._host, name):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(self._host, name)
        if isinstance(value, np.ufunc):
            value = _Ufunc(value)
        elif isinstance(value, (type, float, int, types.ModuleType)) or value is None:
            pass                              # dtypes, constants
        elif callable(value):
            value = _device_function(value, name)
        setattr(self, name, value)            # memoise
        return value


def asnumpy(a, stream=None, order="C", out=None):
    """A numpy copy of ``a`` (a device array, or anything numpy accepts)."""
    if isinstance(a, ndarray):
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def get_array_module(*args):
    """``cupy`` if any argument is a device array, else ``numpy``."""
    return cupy if any(isinstance(a, ndarray) for a in args) else np


def _asarray(a, dtype=None, order=None, *, blocking=False):
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    return _view(np.array(_unwrap(a), dtype=dtype, order=order or "K"))


def _array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=False):
    return _view(np.array(_unwrap(obj), dtype=dtype, copy=True, order=order, ndmin=ndmin))


def _make_cupy():
    from . import _host_cuda
    cuda = types.SimpleNamespace(
        Device=_host_cuda.Device, Stream=_host_cuda.Stream, Event=_host_cuda.Event,
        MemoryPool=_host_cuda.MemoryPool, PinnedMemoryPool=_host_cuda.MemoryPool,
        get_current_stream=_host_cuda.get_current_stream,
        get_elapsed_time=_host_cuda.get_elapsed_time,
        runtime=_host_cuda.runtime, set_allocator=_host_cuda.set_allocator,
        set_pinned_memory_allocator=_host_cuda.set_allocator,
        malloc_managed=None, is_available=lambda: True)
    extra = {
        "ndarray": ndarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
        "asarray": _asarray, "array": _array, "cuda": cuda,
        "RawKernel": _host_cuda.RawKernel, "RawModule": _host_cuda.RawModule,
        "get_default_memory_pool": _host_cuda.get_default_memory_pool,
        "get_default_pinned_memory_pool": _host_cuda.get_default_memory_pool,
        "__version__": f"{_cupy_api.VERSION} (emulated on numpy {np.__version__})",
        "emulated": True,
    }
    for sub, names in _cupy_api.SUBMODULES.items():
        extra[sub] = _Namespace(f"cupy.{sub}", getattr(np, sub), names)
    return _Namespace("cupy", np, _cupy_api.NAMES, extra)


cupy = _make_cupy()
