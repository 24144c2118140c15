"""NdArray: the user-facing array, a thin view of a :class:`SyncedArray`."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ._array import SyncedArray
from .array_family import HOST
from .context import get_current_context
from .plugins.resolve import family_of_context


class UnsupportedDtypeError(TypeError, RuntimeError):
    """An array type nnabla cannot hold (complex, object, strings, dates): a ``TypeError``,
    and a ``RuntimeError`` as nnabla raises ("Unknown dtype")."""


def check_dtype(dtype, api, arg):
    """``dtype`` as a numpy dtype when nnabla can hold it (bool, integers, floats), else
    :class:`UnsupportedDtypeError` naming ``api`` and the argument ``arg``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{api}: argument '{arg}' is {dtype!r}; expected a numpy dtype "
                        "(bool, integer or floating-point)") from None
    if dt.kind not in "biuf":
        raise UnsupportedDtypeError(f"{api}: argument '{arg}' has dtype {dt}; expected a "
                                    "bool, integer or floating-point type")
    return dt


def as_host_array(value, api, arg):
    """``np.asarray(value)``, refusing None, ragged sequences and types nnabla cannot hold."""
    if value is None:
        raise TypeError(f"{api}: argument '{arg}' is None; expected an array (numpy array, "
                        "list or number)")
    try:
        value = np.asarray(value)
    except ValueError:
        raise ValueError(f"{api}: argument '{arg}' is a ragged sequence (rows of different "
                         "lengths); expected an array, or nested lists of one shape") from None
    check_dtype(value.dtype, api, arg)
    return value


def _squeezed(shape):
    """``shape`` without its size-1 axes (shapes that hold the same values in order)."""
    return tuple(d for d in shape if d != 1)


def _as_dtype(dtype):
    return check_dtype(dtype, "NdArray", "dtype")


def _context_dtype():
    """The storage type of the current context's first backend ('half': float16)."""
    backend = get_current_context().backend
    config = backend[0].partition(":")[2] if backend else "float"
    return np.dtype(np.float16 if config == "half" else np.float32)


class NdArray:
    """A device-agnostic n-d array.

    Arithmetic operators run functions immediately and return new ``NdArray``s;
    in-place operators (``+=`` ...) write into this array.

    Args:
        shape (tuple of int): shape of the array, also given as separate ints
            (``NdArray(2, 3)``) as nnabla accepts. Contents read as zeros until set.

    Raises:
        TypeError: a size that is not an integer.
        ValueError: a negative size.

    Example:
        >>> import nnabla as nn
        >>> nn.NdArray().shape, nn.NdArray(3).shape, nn.NdArray(2, 3).shape
        ((), (3,), (2, 3))
        >>> nn.NdArray([2, 3]).shape
        (2, 3)
    """

    __slots__ = ("_array", "__weakref__")

    def __init__(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (numbers.Integral, np.integer)):
            shape = shape[0]
        try:
            if isinstance(shape, (dict, set, frozenset, str, bytes)):
                raise TypeError     # unordered, or characters: not a shape
            dims = tuple(shape)
        except TypeError:
            raise TypeError(f"nn.NdArray: argument 'shape' must be a sequence of ints; given "
                            f"{shape!r}") from None
        for s in dims:
            if isinstance(s, (bool, np.bool_)) or not isinstance(s, (numbers.Integral,
                                                                     np.integer)):
                raise TypeError(f"nn.NdArray: argument 'shape' must hold ints; given {dims!r}")
        dims = tuple(int(s) for s in dims)
        if any(s < 0 for s in dims):
            raise ValueError(f"nn.NdArray: argument 'shape' has a negative size: {dims}")
        self._array = SyncedArray(dims)

    @classmethod
    def _wrap(cls, synced):
        obj = cls.__new__(cls)
        obj._array = synced
        return obj

    @staticmethod
    def from_numpy_array(nparr):
        """Create an NdArray holding a copy of ``nparr``.

        Raises:
            TypeError: ``nparr`` is None, or of a type nnabla cannot hold (complex, object).
        """
        nparr = as_host_array(nparr, "NdArray.from_numpy_array", "nparr")
        a = NdArray(nparr.shape)
        a.data = nparr
        return a

    # -- properties -----------------------------------------------------------------------
    @property
    def shape(self):
        return self._array.shape

    @property
    def ndim(self):
        return len(self._array.shape)

    @property
    def size(self):
        return math.prod(self._array.shape)

    @property
    def dtype(self):
        """The numpy type of the values.

        Raises:
            RuntimeError: the array was never materialised (only created, filled or
                zeroed): as in nnabla, its type is decided by the first read or write.
        """
        a = self._array
        if not a.has_type():
            raise RuntimeError("NdArray.dtype: the array holds no data yet (created, filled "
                               "or zeroed only); its type is decided by the first read or "
                               "write (e.g. .data, .cast(dtype))")
        return a.dtype.type

    @property
    def strides(self):
        strides, acc = [], 1
        for s in reversed(self.shape):
            strides.append(acc)
            acc *= s
        return tuple(reversed(strides))

    def size_from_axis(self, axis=-1):
        """Product of the sizes from ``axis`` on (``-1`` means the whole array)."""
        if axis < 0:
            axis = 0
        return math.prod(self.shape[axis:])

    @property
    def modification_count(self):
        return self._array.modification_count

    @property
    def clear_called(self):
        return self._array.clear_called

    @property
    def zeroing(self):
        """True after ``zero()`` until the array is written (reading keeps it)."""
        return self._array.fill_value == 0

    # -- data access ----------------------------------------------------------------------
    @property
    def data(self):
        """The values as a numpy array (a reference, not a copy)."""
        a = self._array
        return a.cast(a.dtype, HOST)

    @data.setter
    def data(self, value):
        a = self._array
        if isinstance(value, (numbers.Number, np.number)) and not isinstance(value, bool):
            if not (isinstance(value, (numbers.Integral, np.integer)) and abs(value) > 1 << 53):
                a.fill(value)
                return
            value = np.full(a.shape, value)     # not exact in float64: int64, as nnabla
        if isinstance(value, NdArray):
            value = value.data
        value = as_host_array(value, "NdArray.data", "value")
        if value.shape != a.shape and (value.size != int(np.prod(a.shape)) or _squeezed(
                value.shape) != _squeezed(a.shape)):
            raise ValueError(f"NdArray.data: cannot assign an array of shape {value.shape} "
                             f"to an array of shape {a.shape}")
        if value.dtype != a.dtype:
            a.dtype = value.dtype
        a.cast(a.dtype, HOST)[...] = value.reshape(a.shape)

    def get_data(self, mode="rw", dtype=None):
        """The values as numpy; ``mode`` 'r', 'w' or 'rw'; ``dtype`` forces a type."""
        if mode not in ("r", "w", "rw"):
            raise ValueError(f"NdArray.get_data: argument 'mode' is {mode!r}; "
                             "expected 'r', 'w' or 'rw'")
        a = self._array
        dtype = a.dtype if dtype is None else _as_dtype(dtype)
        if mode == "r":
            return a.get(dtype, HOST)
        return a.cast(dtype, HOST)

    def cast(self, dtype, ctx=None):
        """Cast in place to ``dtype`` (None: keep the type); returns the numpy array when
        ``ctx`` is None."""
        a = self._array
        if dtype is not None and dtype is not a.dtype:
            a.dtype = check_dtype(dtype, "NdArray.cast", "dtype")
        if ctx is None:
            return a.cast(a.dtype, HOST)
        a.cast(a.dtype, family_of_context(ctx))
        return None

    def data_ptr(self, dtype, ctx=None):
        arr = self.cast(dtype) if ctx is None else self._array.get(_as_dtype(dtype), HOST)
        return arr.ctypes.data

    def zero(self):
        """Fill with zeros lazily; ``clear_called`` becomes False."""
        self.fill(0)

    def fill(self, value):
        """Fill with ``value`` lazily (the array is created when first used); a fill is a
        write, so ``clear_called`` becomes False.

        Raises:
            TypeError: ``value`` is not a number.
        """
        if not isinstance(value, (numbers.Number, np.number)) or isinstance(
                value, (complex, np.complexfloating)):
            raise TypeError(f"NdArray.fill: argument 'value' is of type {type(value).__name__} "
                            f"({value!r}); expected a real number")
        a = self._array
        a.fill(value)
        a.clear_called = False

    def clear(self):
        """Release the memory; ``clear_called`` becomes True."""
        self._array.clear()

    def view(self, shape):
        """A new NdArray of ``shape`` (same size) sharing this one's memory.

        Raises:
            ValueError: the sizes differ.
        """
        shape = tuple(int(s) for s in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"NdArray.view: argument 'shape' {shape} has another size than "
                             f"the array's shape {self.shape}")
        return NdArray._wrap(self._array.window(shape))

    def narrow(self, dim, start, length):
        """A new NdArray over rows ``start`` to ``start + length`` of this one (along axis
        0, the only ``dim`` nnabla allows), sharing its memory: writes through either are
        seen by both.

        Args:
            dim (int): the axis; must be 0.
            start (int): first row; negative counts from the end.
            length (int): number of rows.

        Raises:
            RuntimeError: ``dim`` is not 0, ``start`` or ``length`` is out of range, or
                the rows overlap another live narrowed array of this one (as nnabla).

        Example:
            >>> import numpy as np, nnabla as nn
            >>> a = nn.NdArray.from_numpy_array(np.zeros((4, 2), np.float32))
            >>> a.narrow(0, 1, 2).fill(7)
            >>> a.data[:, 0]
            array([0., 7., 7., 0.], dtype=float32)
        """
        shape = self.shape
        if dim != 0:
            raise RuntimeError(f"NdArray.narrow: argument 'dim' must be 0; given {dim}")
        if not shape:
            raise RuntimeError("NdArray.narrow: a 0-dimensional array cannot be narrowed")
        rows = shape[0]
        if not -rows <= start < rows:
            raise RuntimeError(f"NdArray.narrow: argument 'start' must be in [{-rows}, "
                               f"{rows - 1}]; given {start}")
        start = start + rows if start < 0 else start
        if length < 0 or start + length > rows:
            raise RuntimeError(f"NdArray.narrow: argument 'length' must be in [0, "
                               f"{rows - start}] for start {start}; given {length}")
        row_size = int(np.prod(shape[1:], dtype=np.int64))
        return NdArray._wrap(self._array.narrow(start * row_size, (length,) + shape[1:]))

    def copy_from(self, arr, use_current_context=True):
        """Copy values and type of ``arr`` (same shape) into this array; returns self."""
        if not isinstance(arr, NdArray):
            raise TypeError(f"NdArray.copy_from: argument 'arr' is of type "
                            f"{type(arr).__name__}; expected NdArray")
        if arr.shape != self.shape:
            raise ValueError(f"NdArray.copy_from: argument 'arr' has shape {arr.shape}; "
                             f"expected {self.shape}")
        source = arr._array
        if source.has_type() and source.heads:
            dtype = source.dtype        # nnabla: the copy takes the source's type
        elif use_current_context:       # a lazily filled source: the context's type
            dtype = _context_dtype()
        else:
            dtype = source.dtype
        self._array.dtype = dtype
        self._array.assign(source)
        return self

    # -- python protocol ------------------------------------------------------------------
    def __repr__(self):
        return f"<NdArray({self.shape}) at {hex(id(self))}>"

    def __eq__(self, other):
        return self is other or (isinstance(other, NdArray) and other._array is self._array)

    def __hash__(self):
        return id(self._array)

    def reshape(self, shape):
        """A new NdArray of ``shape`` sharing nothing with this one (values copied)."""
        out = NdArray(shape)
        out.data = self.data.reshape(shape)
        return out


