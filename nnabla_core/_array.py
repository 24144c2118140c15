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

import types
import weakref

import numpy as np

from . import _native_graph
from .array_family import HOST

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
I64 = np.dtype(np.int64)

# The memory counters live in C, where kernel outputs are made and released:
# ``memory_stats() -> {"in_use": bytes, "peak": bytes}`` (the peak since the last
# ``reset_peak_memory()``); ``_account(delta)`` counts bytes in (or out, negative).
memory_stats = _native_graph.memory_stats
reset_peak_memory = _native_graph.reset_peak_memory
_account = _native_graph.account


# The heads of an array that holds none: one shared read-only mapping, so an empty or cleared
# array holds no dict of its own (``_hold`` makes one); the auto-forward intermediates a
# chain releases then leave one object less each to the garbage collector.
NO_HEADS = types.MappingProxyType({})


class SyncedArray:
    """See module docstring. ``dtype`` is the type users see through ``NdArray.data``."""

    is_window = False       # a SyncedArrayView (a window on another array's memory)
    # ``summed``: a weak reference to the head :func:`nnabla._execute.accumulate` made by
    # adding (absent until then; read with ``getattr``), which later sums may add into.
    __slots__ = ("shape", "dtype", "heads", "fill_value", "modification_count",
                 "clear_called", "nbytes_held", "narrowed", "typed", "sharers", "provisional",
                 "summed", "__weakref__")

    def __init__(self, shape=(), dtype=F32):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.heads = NO_HEADS
        self.fill_value = None
        self.modification_count = 0
        self.clear_called = False
        self.nbytes_held = 0
        self.narrowed = None        # weak references to NdArray.narrow windows of it
        self.typed = False          # materialised once (NdArray.dtype is known)
        self.sharers = None         # weak references to other nodes holding it
        self.provisional = None     # its head when only windows' fills made it (untyped)

    # the bytes its heads held leave the memory counters (in C: it runs for every array)
    __del__ = _native_graph.release_array_bytes

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
        self.fill_value = None
        return head

    def set(self, arr, family=HOST):
        """Install ``arr`` (a kernel's output) as the only head, without copying."""
        self.put((family, arr.dtype), arr, family.nbytes(arr))

    # put(key, arr, nbytes): :meth:`set` with the head's key ``(family, arr.dtype)`` and size
    # known: ``arr`` becomes the only head (in C: static plans store every output with it)
    put = _native_graph.put_array

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
        else:       # a lazy fill: a read materialises it (``fill_value`` stays: zeroing)
            value = 0 if self.fill_value is None else self.fill_value
            head = self._new(family, dtype, value)
        self._hold((family, dtype), head)
        return head

    def _new(self, family, dtype, value):
        if value == 0:
            return family.zeros(self.shape, dtype)
        return family.full(self.shape, value, dtype)

    def _hold(self, key, head):
        if self.heads is NO_HEADS:
            self.heads = {key: head}
        else:
            self.heads[key] = head
        n = key[0].nbytes(head)
        self.nbytes_held += n
        _account(n)

    def swap_out(self, family, to=HOST):
        """Move the contents out of ``family``'s heads into a head of family ``to`` (a
        copy of the widest-typed one, unless ``to`` already holds a head as wide), then drop
        ``family``'s heads; contents and ``modification_count`` are unchanged
        (``nnabla.lms``). Returns the bytes released."""
        held = [key for key in self.heads if key[0] is family]
        if not held or family is to:
            return 0
        widest = max((key[1] for key in held), key=lambda d: np.dtype(d).itemsize)
        heads = {key: head for key, head in self.heads.items() if key[0] is not family}
        added = 0
        if not any(np.dtype(key[1]).itemsize >= np.dtype(widest).itemsize and key[0] is to
                   for key in heads):
            copy = to.convert(self.heads[(family, widest)], family, widest)
            heads = {(to, widest): copy, **heads}      # first: the head others sync from
            added = to.nbytes(copy)
            _account(added)
        released = sum(family.nbytes(self.heads[key]) for key in held)
        self.heads = heads
        self.nbytes_held += added - released
        _account(-released)
        return released

    def _drop_all(self):
        self.heads = NO_HEADS
        _account(-self.nbytes_held)
        self.nbytes_held = 0

    # -- lazy states ----------------------------------------------------------------------
    def zero(self):
        self.fill(0)

    def fill(self, value):
        if self.heads:
            self.typed = True
        self._drop_all()
        self.fill_value = value
        self.modification_count += 1

    def has_type(self):
        """Whether the array was ever materialised (nnabla decides its dtype then)."""
        return bool(self.heads) or self.typed

    # Release the memory; the contents become undefined (read as zeros). In C: auto-forward
    # clears an intermediate's data whenever its last handle goes away.
    clear = _native_graph.clear_array

    def release(self):
        """Release memory silently (engine-internal; not a user ``clear``)."""
        if self.heads:
            self.typed = True
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

    def window(self, shape):
        """A :class:`SyncedArrayView` of all of this array's elements in ``shape`` (an
        in-place reshape); any number of them may exist."""
        return SyncedArrayView(self, 0, shape,
                               isinstance(self, SyncedArrayView) and self.narrowed_family)

    def narrow(self, offset, shape):
        """A :class:`SyncedArrayView` of ``shape`` over this array's elements from flat
        ``offset`` on (``NdArray.narrow``); views of one array may not overlap.

        Raises:
            RuntimeError: the range overlaps a live view of this array.
        """
        shape = tuple(shape)
        size = int(np.prod(shape, dtype=np.int64))
        live = [v for v in (r() for r in self.narrowed or ()) if v is not None]
        start = offset + (self.offset if isinstance(self, SyncedArrayView) else 0)
        for other in live:
            if start < other.offset + other.size and other.offset < start + size:
                raise RuntimeError(
                    f"NdArray.narrow: elements [{start}, {start + size}) overlap an existing "
                    f"narrowed array of the same array ([{other.offset}, "
                    f"{other.offset + other.size}))")
        view = SyncedArrayView(self, offset, shape, True)
        self.narrowed = [weakref.ref(v) for v in live] + [weakref.ref(view)]
        return view

    def in_narrow_family(self):
        """Whether this array has live narrowed arrays (nnabla then refuses to release it
        when a Variable handle goes away)."""
        return self.narrowed is not None and any(r() is not None for r in self.narrowed)


_native_graph.bind_array(SyncedArray, NO_HEADS)
# holding(shape, key, arr, nbytes): a new SyncedArray of ``shape`` (a tuple) whose only head
# is ``arr`` under ``key`` (``(family, dtype)``), ``nbytes`` big: ``SyncedArray(shape,
# dtype)`` followed by ``put(key, arr, nbytes)`` in one step (the hot path of kernel outputs)
holding = _native_graph.holding


class SyncedArrayView(SyncedArray):
    """A window on another SyncedArray's memory: ``shape`` elements from flat ``offset``.

    Every read and write goes through the root array (the one that owns the memory), so
    writes through either are seen by both. The window has the root's dtype: writing
    another dtype through it, and clearing it, raise ``RuntimeError`` (nnabla's rules for
    narrowed arrays). Heads are windows of the root's heads; a root head a window writes
    through is made contiguous first.
    """

    is_window = True
    __slots__ = ("root", "offset", "size", "zeroing", "narrowed_family")

    def __init__(self, parent, offset, shape, narrowed_family=False):
        base = parent.offset if isinstance(parent, SyncedArrayView) else 0
        self.root = parent.root if isinstance(parent, SyncedArrayView) else parent
        self.offset = base + int(offset)
        self.shape = tuple(shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.zeroing = False
        self.narrowed = self.sharers = None
        self.typed = False
        self.narrowed_family = narrowed_family     # made by (a view of) NdArray.narrow
        if self.offset < 0 or self.offset + self.size > int(np.prod(self.root.shape)):
            raise RuntimeError(f"a view of {self.size} elements from {self.offset} does not "
                               f"fit an array of shape {self.root.shape}")

    # the root's state, seen through the window
    heads = property(lambda self: {} if self.zeroing else
                     {key: self._window(key[0], head) for key, head in self.root.heads.items()},
                     lambda self, value: None)
    modification_count = property(lambda self: self.root.modification_count,
                                  lambda self, value: None)
    clear_called = property(lambda self: False, lambda self, value: None)
    nbytes_held = property(lambda self: 0, lambda self, value: None)

    @property
    def fill_value(self):
        if self.zeroing:
            return 0
        return None if self.root.heads else self.root.fill_value

    @fill_value.setter
    def fill_value(self, value):
        pass

    @property
    def dtype(self):
        return self.root.dtype

    @dtype.setter
    def dtype(self, value):
        self.root.dtype = self._check_dtype(value)

    def _check_dtype(self, dtype):
        """``dtype`` as a numpy dtype; a narrowed window keeps its root's once the root has
        a type (before, as in nnabla, the first cast decides it)."""
        dtype = np.dtype(dtype)
        root = self.root
        if dtype != root.dtype and self.narrowed_family and root.has_type() \
                and not self._provisional():
            raise RuntimeError(f"a narrowed array cannot be cast to {dtype}: it shares the "
                               f"memory of an array of {self.root.dtype}")
        return dtype

    def _provisional(self):
        """Whether the root's only head is the one windows' fills made (nnabla keeps such
        fills lazy, so the root has no type yet and a cast may still choose it)."""
        head = self.root.provisional
        heads = self.root.heads
        return head is not None and len(heads) == 1 and next(iter(heads.values())) is head

    def _window(self, family, head):
        total = int(np.prod(head.shape, dtype=np.int64))
        if self.offset == 0 and self.size == total:
            return family.reshape(head, self.shape)     # a whole-array window (reshape)
        flat = family.reshape(head, (total,))
        try:
            part = flat[self.offset:self.offset + self.size]
        except TypeError:
            raise RuntimeError(f"NdArray.narrow: arrays of the {family.name!r} family do not "
                               "support slicing, which narrowed arrays need") from None
        return family.reshape(part, self.shape)

    def has_type(self):
        return self.root.has_type()

    def in_narrow_family(self):
        return self.narrowed_family or self.root.in_narrow_family()

    def _family(self):
        heads = self.root.heads
        return next(iter(heads))[0] if heads else HOST

    def get(self, dtype, family=HOST):
        return self._window(family, self.root.get(dtype, family))

    def cast(self, dtype, family=HOST):
        root = self.root
        root.dtype = self._check_dtype(dtype)       # a whole-array window may retype it
        head = root.cast(root.dtype, family)
        if not getattr(getattr(head, "flags", None), "c_contiguous", True):
            head = family.copy(head)
            root.set(head, family)
        root.provisional = None         # a write through a window gives the root its type
        self.zeroing = False
        return self._window(family, head)

    def _whole(self):
        return self.offset == 0 and self.size == int(np.prod(self.root.shape, dtype=np.int64))

    def _write(self, family, arr):
        """Write ``arr`` (of ``family``) through the window, in the root's dtype (which a
        root without a type yet takes from ``arr``)."""
        root = self.root
        if self._whole():       # no element assignment: any family works
            if arr.dtype != root.dtype:
                arr = family.astype(arr, root.dtype)
            root.set(family.reshape(arr, root.shape), family)
            self.zeroing = False
            return
        self.cast(arr.dtype, family)[...] = arr     # put/assign checked the type

    def put(self, key, arr, nbytes):
        self._check_dtype(arr.dtype)        # a whole-array window converts to its type
        self._write(key[0], arr)

    def set(self, arr, family=HOST):
        self.put((family, arr.dtype), arr, 0)

    def assign(self, other):
        if not other.heads:
            self.fill(0 if other.fill_value is None else other.fill_value)
            return
        (fam, _), head = next(iter(other.heads.items()))
        self._check_dtype(head.dtype)
        self._write(fam, fam.copy(head))

    def fill(self, value):
        if self._whole():
            self.root.fill(value)
        else:
            # written now, but (as nnabla's lazy fill of a window) without typing the root
            untyped = not self.root.has_type() or self._provisional()
            self.cast(self.root.dtype, self._family())[...] = value
            if untyped:
                self.root.provisional = next(iter(self.root.heads.values()))
        self.zeroing = value == 0

    def zero(self):
        self.fill(0)

    def clear(self):
        raise RuntimeError("NdArray.clear: a narrowed array cannot be cleared (its memory "
                           "belongs to the array it was narrowed from)")

    def release(self):
        """Nothing to release: the memory is the root's."""

    def reshape(self, shape):
        if tuple(shape) != self.shape:
            raise RuntimeError(f"a narrowed array of shape {self.shape} cannot be resized "
                               f"to {tuple(shape)}")
