"""Pooling and softmax through cuDNN's descriptor API (``libcudnn.so.9`` of the
``nvidia-cudnn-cu13`` wheel, by ctypes), as nnabla's cuDNN extension runs them.

The cuDNN frontend's Python graphs have no pooling or softmax operation, so these two go
through the library's descriptor functions (``cudnnPoolingForward``, ``cudnnSoftmaxForward``
and their backwards). A :class:`PoolingDescriptor` or :class:`SoftmaxDescriptor` holds the
library's tensor and operation descriptors of one (device, data type, shapes, arguments)
key; each is built once and cached for the process. Descriptors are host objects: they are
built and checked by the library without a device (the pooling output shape cuDNN derives
is compared with nnabla's), so everything but execution runs here; execution needs a GPU.
"""
from __future__ import annotations

import ctypes
import glob
import math
import os
import threading
from dataclasses import dataclass

COUNTS = {"descriptors": 0, "hits": 0, "handles": 0}       # tests read these
# cudnnDataType_t, cudnnPoolingMode_t, cudnnSoftmaxAlgorithm_t / Mode_t, cudnnNanPropagation_t
DATA_TYPES = {"float": 0, "half": 2}
POOL_MAX, POOL_AVG_INCLUDE_PAD, POOL_AVG_EXCLUDE_PAD, POOL_MAX_DETERMINISTIC = 0, 1, 2, 3
SOFTMAX_ACCURATE, SOFTMAX_LOG = 1, 2
SOFTMAX_MODE_CHANNEL = 1
NOT_PROPAGATE_NAN = 0


class CudnnLibraryError(RuntimeError):
    """libcudnn is missing or a call returned an error status (the message says which)."""


_lib = []
_lock = threading.Lock()


def _candidates():
    try:
        import nvidia.cudnn
        for folder in nvidia.cudnn.__path__:
            yield from sorted(glob.glob(os.path.join(folder, "lib", "libcudnn.so.*")))
    except ImportError:
        pass
    yield "libcudnn.so.9"


def library():
    """The loaded ``libcudnn`` (from the nvidia-cudnn-cu13 wheel, else the system's)."""
    with _lock:
        if not _lib:
            errors = []
            for path in _candidates():
                try:
                    lib = ctypes.CDLL(path)
                    break
                except OSError as e:
                    errors.append(str(e))
            else:
                raise CudnnLibraryError(
                    "libcudnn cannot be loaded (" + "; ".join(errors) + "); install it with "
                    "`pip install nvidia-cudnn-cu13` (nnabla-ext-cudnn declares it)")
            lib.cudnnGetErrorString.restype = ctypes.c_char_p
            _lib.append(lib)
        return _lib[0]


def call(name, *args):
    """Call cuDNN function ``name``; raise :class:`CudnnLibraryError` on a bad status."""
    lib = library()
    status = getattr(lib, name)(*args)
    if status:
        raise CudnnLibraryError(f"{name} failed: {lib.cudnnGetErrorString(status).decode()} "
                                f"(status {status})")


def _ints(values):
    return (ctypes.c_int * len(values))(*[int(v) for v in values])


class TensorDescriptor:
    """A ``cudnnTensorDescriptor_t`` of ``dims`` with ``strides`` (elements)."""

    def __init__(self, data_type, dims, strides):
        self.dims, self.strides = list(dims), list(strides)
        self.handle = ctypes.c_void_p()
        call("cudnnCreateTensorDescriptor", ctypes.byref(self.handle))
        call("cudnnSetTensorNdDescriptor", self.handle, DATA_TYPES[data_type], len(dims),
             _ints(dims), _ints(strides))

    def __del__(self):
        if _lib and self.handle:
            _lib[0].cudnnDestroyTensorDescriptor(self.handle)


def packed_strides(dims):
    return [math.prod(dims[i + 1:]) for i in range(len(dims))]


def channel_last_strides(dims):
    """Strides of (N, C, *spatial) dims stored as (N, *spatial, C)."""
    c, spatial = dims[1], dims[2:]
    return [c * math.prod(spatial), 1] + [c * math.prod(spatial[i + 1:])
                                          for i in range(len(spatial))]


@dataclass(frozen=True)
class PoolingKey:
    """One pooling as cuDNN sees it: (N, C, *spatial) dims of x and y, the window."""

    device: int
    dtype: str
    mode: int
    channel_last: bool
    x_dims: tuple
    y_dims: tuple
    kernel: tuple
    pad: tuple
    stride: tuple


def pooling_key(device, dtype, mode, x_shape, y_shape, kernel, pad, stride, channel_last):
    """The :class:`PoolingKey` of an nnabla pooling (leading axes fold into N; 1-D pooling
    becomes 2-D with a width of 1)."""
    k = len(kernel)
    if channel_last:
        lead, spatial, c = x_shape[:-k - 1], x_shape[-k - 1:-1], x_shape[-1]
        y_spatial = y_shape[-k - 1:-1]
    else:
        lead, spatial, c = x_shape[:-k], x_shape[-k:], 1
        y_spatial = y_shape[-k:]
    n = math.prod(lead)
    kernel, pad, stride = tuple(kernel), tuple(pad), tuple(stride)
    spatial, y_spatial = tuple(spatial), tuple(y_spatial)
    if k == 1:
        spatial, y_spatial = spatial + (1,), y_spatial + (1,)
        kernel, pad, stride = kernel + (1,), pad + (0,), stride + (1,)
    return PoolingKey(int(device), dtype, int(mode), bool(channel_last and c > 1),
                      (n, c) + spatial, (n, c) + y_spatial, kernel, pad, stride)


class PoolingDescriptor:
    """The tensor and pooling descriptors of a :class:`PoolingKey`, checked by cuDNN."""

    def __init__(self, key):
        strides = channel_last_strides if key.channel_last else packed_strides
        self.key = key
        self.x = TensorDescriptor(key.dtype, key.x_dims, strides(list(key.x_dims)))
        self.y = TensorDescriptor(key.dtype, key.y_dims, strides(list(key.y_dims)))
        self.handle = ctypes.c_void_p()
        call("cudnnCreatePoolingDescriptor", ctypes.byref(self.handle))
        n = len(key.kernel)
        call("cudnnSetPoolingNdDescriptor", self.handle, key.mode, NOT_PROPAGATE_NAN, n,
             _ints(key.kernel), _ints(key.pad), _ints(key.stride))
        out = (ctypes.c_int * (n + 2))()
        call("cudnnGetPoolingNdForwardOutputDim", self.handle, self.x.handle, n + 2, out)
        if tuple(out) != key.y_dims:
            raise CudnnLibraryError(f"cuDNN pools {key.x_dims} to {tuple(out)}, nnabla to "
                                    f"{key.y_dims}")

    def __del__(self):
        if _lib and self.handle:
            _lib[0].cudnnDestroyPoolingDescriptor(self.handle)


@dataclass(frozen=True)
class SoftmaxKey:
    """A softmax over the middle axis of an (outer, axis, inner) view."""

    device: int
    dtype: str
    algorithm: int
    outer: int
    size: int
    inner: int


def softmax_key(device, dtype, algorithm, shape, axis):
    return SoftmaxKey(int(device), dtype, int(algorithm), math.prod(shape[:axis]),
                      int(shape[axis]), math.prod(shape[axis + 1:]))


class SoftmaxDescriptor:
    """The (outer, axis, inner, 1) tensor descriptor of a :class:`SoftmaxKey`."""

    def __init__(self, key):
        self.key = key
        dims = [key.outer, key.size, key.inner, 1]
        self.x = TensorDescriptor(key.dtype, dims, packed_strides(dims))


_descriptors = {}
_handles = {}


def descriptor(key):
    """The cached descriptor object of ``key`` (a pooling or softmax key)."""
    found = _descriptors.get(key)
    if found is not None:
        COUNTS["hits"] += 1
        return found
    with _lock:
        found = _descriptors.get(key)
    if found is None:
        built = (PoolingDescriptor if isinstance(key, PoolingKey) else SoftmaxDescriptor)(key)
        with _lock:
            found = _descriptors.setdefault(key, built)
            COUNTS["descriptors"] += 1
    else:
        COUNTS["hits"] += 1
    return found


def handle(device, stream_ptr):
    """The library handle of ``device`` (created at its first use), bound to the stream."""
    with _lock:
        h = _handles.get(device)
        if h is None:
            h = ctypes.c_void_p()
            call("cudnnCreate", ctypes.byref(h))
            _handles[device] = h
            COUNTS["handles"] += 1
    call("cudnnSetStream", h, ctypes.c_void_p(stream_ptr))
    return h


def _scalars(dtype):
    # alpha/beta are float for float and half data (double only for double data)
    return ctypes.byref(ctypes.c_float(1.0)), ctypes.byref(ctypes.c_float(0.0))


def _ptr(a):
    return ctypes.c_void_p(a.data.ptr)


def pooling_forward(h, desc, x, y):
    one, zero = _scalars(desc.key.dtype)
    call("cudnnPoolingForward", h, desc.handle, one, desc.x.handle, _ptr(x), zero,
         desc.y.handle, _ptr(y))


def pooling_backward(h, desc, y, dy, x, dx):
    one, zero = _scalars(desc.key.dtype)
    call("cudnnPoolingBackward", h, desc.handle, one, desc.y.handle, _ptr(y), desc.y.handle,
         _ptr(dy), desc.x.handle, _ptr(x), zero, desc.x.handle, _ptr(dx))


def softmax_forward(h, desc, x, y):
    one, zero = _scalars(desc.key.dtype)
    call("cudnnSoftmaxForward", h, desc.key.algorithm, SOFTMAX_MODE_CHANNEL, one,
         desc.x.handle, _ptr(x), zero, desc.x.handle, _ptr(y))


def softmax_backward(h, desc, y, dy, dx):
    one, zero = _scalars(desc.key.dtype)
    call("cudnnSoftmaxBackward", h, desc.key.algorithm, SOFTMAX_MODE_CHANNEL, one,
         desc.x.handle, _ptr(y), desc.x.handle, _ptr(dy), zero, desc.x.handle, _ptr(dx))


def available():
    """``(True, '')`` when libcudnn loads, else ``(False, reason)``."""
    try:
        library()
    except CudnnLibraryError as e:
        return False, str(e)
    return True, ""


def clear():
    """Forget every descriptor (handles are kept)."""
    with _lock:
        _descriptors.clear()
