"""SyncedArray: one logical array with heads in several (family, dtype) places.

Heads are keyed by (:class:`~nnabla.array_family.ArrayFamily`, dtype); every conversion,
allocation and copy goes through the family, so no head is ever assumed to be numpy.
``get`` returns a head for reading (synchronising lazily from another head);
``cast`` returns a head for writing and makes it the only valid one; ``set``
installs a kernel's output as the only head. ``zero``/``fill`` are lazy until
a head is requested. Bytes held by heads are tracked per family
(:func:`memory_stats`), which is what the memory tests and benchmarks read.
"""
from __future__ import annotations

import numpy as np

from .array_family import HOST

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
I64 = np.dtype(np.int64)

_memory = {"in_use": 0, "peak": 0}


def memory_stats():
    """Bytes currently held by array heads, and the peak since the last reset."""
    return dict(_memory)


def reset_peak_memory():
    _memory["peak"] = _memory["in_use"]


def _account(nbytes):
    used = _memory["in_use"] + nbytes
    _memory["in_use"] = used
    if used > _memory["peak"]:
        _memory["peak"] = used


class SyncedArray:
    """See module docstring. ``dtype`` is the type users see through ``NdArray.data``."""

    __slots__ = ("shape", "dtype", "heads", "fill_value", "modification_count",
                 "clear_called", "nbytes_held", "__weakref__")

    def __init__(self, shape=(), dtype=F32):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.heads = {}
        self.fill_value = None
        self.modification_count = 0
        self.clear_called = False
        self.nbytes_held = 0

    def __del__(self):
        if self.nbytes_held:
            _memory["in_use"] -= self.nbytes_held

    # -- reading / writing ----------------------------------------------------------------
    def get(self, dtype, family=HOST):
        """A head for reading: no other head is invalidated."""
        head = self.heads.get((family, dtype))
        if head is not None:
            return head
        return self._sync(dtype, family)

    def cast(self, dtype, family=HOST):
        """A head for writing: it becomes the only valid head."""
        head = self.get(dtype, family)
        if len(self.heads) > 1:
            self._drop_all()
            self._hold((family, dtype), head)
        self.modification_count += 1
        self.clear_called = False
        return head

    def set(self, arr, family=HOST):
        """Install ``arr`` (a kernel's output) as the only head, without copying."""
        self.put((family, arr.dtype), arr, family.nbytes(arr))

    def put(self, key, arr, nbytes):
        """:meth:`set` with the head's key ``(family, arr.dtype)`` and size known (plans)."""
        dtype = key[1]
        used = _memory["in_use"] + nbytes - self.nbytes_held
        self.heads = {key: arr}
        self.nbytes_held = nbytes
        _memory["in_use"] = used
        if used > _memory["peak"]:
            _memory["peak"] = used
        self.fill_value = None
        self.dtype = dtype
        self.modification_count += 1
        self.clear_called = False

    def assign(self, other):
        """Take ``other``'s values (in the family they are in), in this array's dtype."""
        if not other.heads:
            self.fill(0 if other.fill_value is None else other.fill_value)
            return
        (fam, _), head = next(iter(other.heads.items()))
        self.set(fam.astype(head, self.dtype) if head.dtype != self.dtype else fam.copy(head),
                 fam)

    def _sync(self, dtype, family):
        if self.heads:
            (source, _), src = next(iter(self.heads.items()))
            head = family.convert(src, source, dtype)
        else:
            value = 0 if self.fill_value is None else self.fill_value
            head = self._new(family, dtype, value)
            self.fill_value = None
        self._hold((family, dtype), head)
        return head

    def _new(self, family, dtype, value):
        if value == 0:
            return family.zeros(self.shape, dtype)
        return family.full(self.shape, value, dtype)

    def _hold(self, key, head):
        self.heads[key] = head
        n = key[0].nbytes(head)
        self.nbytes_held += n
        _account(n)

    def _drop_all(self):
        self.heads = {}
        _memory["in_use"] -= self.nbytes_held
        self.nbytes_held = 0

    # -- lazy states ----------------------------------------------------------------------
    def zero(self):
        self.fill(0)

    def fill(self, value):
        self._drop_all()
        self.fill_value = value
        self.modification_count += 1

    def clear(self):
        """Release the memory; the contents become undefined (read as zeros)."""
        self._drop_all()
        self.fill_value = None
        self.clear_called = True

    def release(self):
        """Release memory silently (engine-internal; not a user ``clear``)."""
        if self.heads:
            self._drop_all()

    def view(self, shape):
        """A new SyncedArray of ``shape`` whose current heads share this one's memory."""
        shape = tuple(shape)
        if int(np.prod(shape)) != int(np.prod(self.shape)):
            raise ValueError(f"cannot view an array of shape {self.shape} as {shape}")
        other = SyncedArray(shape, self.dtype)
        other.fill_value = self.fill_value
        for key, head in self.heads.items():
            other._hold(key, key[0].reshape(head, shape))
        return other

    def reshape(self, shape):
        """Reset the logical shape; existing contents are kept when the size agrees."""
        shape = tuple(shape)
        heads = {}
        size = int(np.prod(shape))
        for key, head in self.heads.items():
            if int(np.prod(head.shape)) == size:
                heads[key] = key[0].reshape(head, shape)
        self._drop_all()
        self.shape = shape
        for key, head in heads.items():
            self._hold(key, head)
