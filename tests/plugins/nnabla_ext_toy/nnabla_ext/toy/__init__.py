"""A toy device backend, shipped as its own distribution to prove the plugin story.

Its arrays (:class:`ToyArray`) wrap numpy but are a distinct family, so the
core must synchronise them with CPU arrays when a function falls back to 'cpu'.
"""
from __future__ import annotations

import numpy as np

__version__ = "0.4.0"
CALLS = []          # names of the toy kernels that ran (tests read this)


class ToyArray:
    """A device array of the toy family."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = np.array(value, copy=True)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)
    nbytes = property(lambda self: self.value.nbytes)
    size = property(lambda self: self.value.size)
    base = None

    def astype(self, dtype, copy=True):
        return ToyArray(self.value.astype(dtype))

    def reshape(self, shape):
        return ToyArray(self.value.reshape(shape))

    def copy(self):
        return ToyArray(self.value)


class xp:
    """The array namespace of the toy family (what the family's defaults call)."""
    ndarray = ToyArray

    @staticmethod
    def zeros(shape, dtype):
        return ToyArray(np.zeros(shape, dtype))

    @staticmethod
    def full(shape, value, dtype):
        return ToyArray(np.full(shape, value, dtype))

    @staticmethod
    def asarray(a):
        return ToyArray(np.asarray(a))


def context(device_id="0", type_config="float", **kw):
    from nnabla import Context
    return Context(backend=[f"toy:{type_config}", f"cpu:{type_config}"],
                   array_class="ToyArray", device_id=str(device_id))


def get_devices():
    return ["0"]


def get_device_count():
    """Number of devices of the toy backend (one), as nnabla's extension modules give."""
    return len(get_devices())


def device_synchronize(device_id="0"):
    pass


def clear_memory_cache():
    pass
