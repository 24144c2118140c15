"""SyncedArray: one logical array with heads in several (family, dtype) places.

``get`` returns a head for reading (synchronising lazily from another head);
``cast`` returns a head for writing and makes it the only valid one; ``set``
installs a kernel's output as the only head. ``zero``/``fill`` are lazy until
a head is requested. Bytes held by heads are tracked per family
(:func:`memory_stats`), which is what the memory tests and benchmarks read.
"""
from __future__ import annotations

import numpy as np

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
I64 = np.dtype(np.int64)

_families = {}          # family name -> ArrayFamily (filled by the plugin registry)
_memory = {"in_use": 0, "peak": 0}


def register_family(family):
    _families[family.name] = family


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


def _to_family(arr, family, dtype):
    """Convert a native head of any family to ``family``/``dtype``."""
    if isinstance(arr, np.generic):     # a numpy scalar some kernel returned
        arr = np.asarray(arr)
    src = type(arr)
    if family == "cpu":
        if src is not np.ndarray:
            arr = _family_of(arr).to_numpy(arr)
        return arr.astype(dtype, copy=False) if arr.dtype != dtype else arr.copy()
    fam = _families[family]
    if src is not np.ndarray:
        arr = _family_of(arr).to_numpy(arr)
    return fam.from_numpy(np.asarray(arr, dtype=dtype))


def _family_of(arr):
    for fam in _families.values():
        if fam.name != "cpu" and fam.to_numpy is not None:
            xp = fam.xp
            if xp is not None and isinstance(arr, getattr(xp, "ndarray", ())):
                return fam
    raise TypeError(f"array of type {type(arr).__name__} belongs to no registered family")


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
    def get(self, dtype, family="cpu"):
        """A head for reading: no other head is invalidated."""
        head = self.heads.get((family, dtype))
        if head is not None:
            return head
        return self._sync(dtype, family)

    def cast(self, dtype, family="cpu"):
        """A head for writing: it becomes the only valid head."""
        head = self.get(dtype, family)
        if len(self.heads) > 1:
            self._drop_all()
            self._hold((family, dtype), head)
        self.modification_count += 1
        self.clear_called = False
        return head

    def set(self, arr, family="cpu"):
        """Install ``arr`` (a kernel's output) as the only head, without copying."""
        dtype = arr.dtype
        n = arr.nbytes
        used = _memory["in_use"] + n - self.nbytes_held
        self.heads = {(family, dtype): arr}
        self.nbytes_held = n
        _memory["in_use"] = used
        if used > _memory["peak"]:
            _memory["peak"] = used
        self.fill_value = None
        self.dtype = dtype
        self.modification_count += 1
        self.clear_called = False

    def _sync(self, dtype, family):
        if self.heads:
            src = next(iter(self.heads.values()))
            head = _to_family(src, family, dtype)
        else:
            value = 0 if self.fill_value is None else self.fill_value
            head = self._new(family, dtype, value)
            self.fill_value = None
        self._hold((family, dtype), head)
        return head

    def _new(self, family, dtype, value):
        if family == "cpu":
            if value == 0:
                return np.zeros(self.shape, dtype)
            return np.full(self.shape, value, dtype)
        fam = _families[family]
        return fam.from_numpy(np.full(self.shape, value, dtype))

    def _hold(self, key, head):
        self.heads[key] = head
        n = head.nbytes
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

    @property
    def has_data(self):
        return bool(self.heads) or self.fill_value is not None

    def view(self, shape):
        """A new SyncedArray of ``shape`` whose current heads share this one's memory."""
        shape = tuple(shape)
        if int(np.prod(shape)) != int(np.prod(self.shape)):
            raise ValueError(f"cannot view an array of shape {self.shape} as {shape}")
        other = SyncedArray(shape, self.dtype)
        other.fill_value = self.fill_value
        for key, head in self.heads.items():
            other._hold(key, head.reshape(shape))
        return other

    def reshape(self, shape):
        """Reset the logical shape; existing contents are kept when the size agrees."""
        shape = tuple(shape)
        heads = {}
        for key, head in self.heads.items():
            if head.size == int(np.prod(shape)):
                heads[key] = head.reshape(shape)
        self._drop_all()
        self.shape = shape
        for key, head in heads.items():
            self._hold(key, head)
