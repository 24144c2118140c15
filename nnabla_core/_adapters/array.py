"""``F.*`` array functions whose Python signature differs from the function type's,
and :func:`getitem`, the indexing behind ``Variable[key]`` and ``NdArray[key]``.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np
from nnabla._dispatch import call_function
from nnabla._nd_array import NdArray
from nnabla._variable import Variable

__all__ = [
    "concatenate",
    "gather_nd",
    "meshgrid",
    "scatter_add",
    "scatter_nd",
    "sort",
    "split",
    "stack",
    "tile",
]


def concatenate(*x, **kw):
    """Joins arrays along an existing axis.

    Args:
        *x (~nnabla.Variable): arrays of equal shape except along ``axis``.
        axis (int): the axis to join along; default: the last one.
        n_outputs, outputs: as for every function.

    Returns:
        ~nnabla.Variable: the joined array.

    Raises:
        ValueError: when the shapes differ off ``axis`` (the message names both).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.zeros((2, 3), np.float32))
    >>> F.concatenate(a, a).shape, F.concatenate(a, a, axis=0).shape
    ((2, 6), (4, 3))
    """
    return call_function("Concatenate", *x, **kw)


def stack(*x, **kw):
    """Joins equally shaped arrays along a new axis ``axis`` (default 0).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.zeros((2, 3), np.float32))
    >>> F.stack(a, a, a).shape, F.stack(a, a, axis=-1).shape
    ((3, 2, 3), (2, 3, 2))
    """
    return call_function("Stack", *x, **kw)


def split(x, axis=0):
    """Splits ``x`` into ``x.shape[axis]`` arrays, removing that axis.

    Returns:
        tuple of ~nnabla.Variable: always a tuple, even of one element.

    Raises:
        RuntimeError: as nnabla, when ``x.shape[axis]`` is 0 (no output) or an axis
            after ``axis`` has size 0 (empty pieces).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.zeros((2, 3), np.float32))
    >>> [y.shape for y in F.split(a, axis=1)]
    [(2,), (2,), (2,)]
    """
    shape = getattr(x, "shape", None)
    if isinstance(shape, tuple) and isinstance(axis, numbers.Integral) \
            and -len(shape) <= axis < len(shape):
        ax = int(axis) % len(shape)
        if shape[ax] == 0 or 0 in shape[ax + 1:]:
            raise RuntimeError(f"F.split: input 'x' of shape {shape} split on axis {axis}; "
                               "expected a non-zero size on that axis and after it (nnabla "
                               "splits no empty pieces)")
    return call_function("Split", x, axis=axis)


def tile(x, reps):
    """Repeats ``x`` ``reps`` times (an int or one per axis, as ``numpy.tile``).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.zeros((2, 3), np.float32))
    >>> F.tile(a, 2).shape, F.tile(a, (2, 1, 1)).shape
    ((2, 6), (2, 2, 3))
    """
    reps = [reps] if isinstance(reps, numbers.Integral) else reps
    return call_function("Tile", x, reps=reps)


def sort(x, axis=-1, reverse=False, with_index=False, only_index=False):
    """Stable sort along ``axis`` (descending if ``reverse``).

    Returns:
        The sorted array; ``(sorted, indices)`` with ``with_index``; only the
        indices with ``only_index``.
    """
    return call_function("Sort", x, axis=axis, reverse=reverse, with_index=with_index,
                         only_index=only_index)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_index_array(like, indices, api):
    """``indices`` as a Variable or NdArray (matching ``like``) of integers.

    Raises:
        TypeError: ``indices`` holds something other than integers (or integral floats).
    """
    if isinstance(indices, (Variable, NdArray)):
        return indices
    try:
        array = np.asarray(indices)
    except ValueError:          # ragged nesting
        array = np.asarray(None)
    if array.dtype.kind not in "iub":
        if array.dtype.kind != "f" or not np.all(np.mod(array, 1) == 0):
            raise TypeError(f"{api}: argument 'indices' is {_short(indices)}; expected a "
                            "Variable, an NdArray or an array-like of integers")
        array = array.astype(np.int64)
    indices = array
    if isinstance(like, NdArray):
        return NdArray.from_numpy_array(indices)
    return Variable.from_numpy_array(indices)


def gather_nd(data, indices):
    """``y[...] = data[indices[0, ...], ..., indices[m-1, ...]]``.

    ``indices`` may be a Variable, an NdArray, or anything ``numpy.asarray``
    turns into integers. Negative indices count from the end; indices out of
    range raise ``ValueError``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> F.gather_nd(a, [[1, 0], [2, -1]]).data.tolist()
    [5.0, 2.0]
    """
    return call_function("GatherNd", data, _as_index_array(data, indices, "F.gather_nd"))


def scatter_nd(data, indices, shape=None, out=None, add=False):
    """Writes (or, with ``add``, adds) ``data`` at ``indices`` into zeros of ``shape``
    or into ``out`` (in place).

    Raises:
        TypeError: unless exactly one of ``shape`` and ``out`` is given.
    """
    if shape is None and out is None:
        raise TypeError("F.scatter_nd: one of the arguments 'shape' and 'out' is required")
    if shape is not None and out is not None:
        raise TypeError("F.scatter_nd: give only one of the arguments 'shape' and 'out'")
    if out is not None and not isinstance(out, (Variable, NdArray)):
        raise TypeError(f"F.scatter_nd: argument 'out' is of type {type(out).__name__}; "
                        "expected nnabla.Variable or nnabla.NdArray")
    if isinstance(shape, np.ndarray):
        shape = shape.tolist()
    return call_function("ScatterNd", data, _as_index_array(data, indices, "F.scatter_nd"), out,
                         shape=None if out is not None else shape, add=add)


def scatter_add(x0, indices, x1, axis=None):
    """Adds ``x1`` into a copy of ``x0`` at ``indices`` along ``axis`` (default 0)."""
    return call_function("ScatterAdd", x0, _as_index_array(x0, indices, "F.scatter_add"), x1,
                         axis=axis)


def meshgrid(*x, ij_indexing=False):
    """Coordinate grids of 1-D arrays, ``'xy'`` (default) or ``'ij'`` indexed.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.zeros(2, np.float32))
    >>> b = nn.NdArray.from_numpy_array(np.zeros(3, np.float32))
    >>> [g.shape for g in F.meshgrid(a, b)]
    [(3, 2), (3, 2)]
    """
    return call_function("Meshgrid", *x, ij_indexing=ij_indexing)


# ------------------------------------------------------------------------- indexing
def _expand_ellipsis(key, ndim):
    """``key`` as a tuple without Ellipsis, one entry per axis plus any None."""
    if not isinstance(key, tuple):
        key = (key,)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > ndim:
        raise IndexError(f"too many indices for a {ndim}-D array: {used} given")
    if Ellipsis in key:
        at = key.index(Ellipsis)
        return key[:at] + (slice(None),) * (ndim - used) + key[at + 1:]
    return key + (slice(None),) * (ndim - used)


def _slice_bounds(k, n):
    """(start, stop, step) for Slice, as nnabla records them: given bounds as given (Slice
    reads them with Python's rules), absent ones the ends the step runs from and to (0 and
    n forward, -1 and -n-1 backward)."""
    step = 1 if k.step is None else operator.index(k.step)
    start = (0 if step > 0 else -1) if k.start is None else operator.index(k.start)
    stop = (n if step > 0 else -n - 1) if k.stop is None else operator.index(k.stop)
    return start, stop, step


def _basic_plan(key, shape):
    """(start, stop, step, output shape) for a key of ints, slices and None."""
    start, stop, step, out_shape = [], [], [], []
    axis = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        n = shape[axis]
        if isinstance(k, slice):
            out_shape.append(len(range(*k.indices(n))))
            a, b, c = _slice_bounds(k, n)
        elif isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, bool):
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            a, b, c = int(k) % n, int(k) % n + 1, 1
        else:
            raise TypeError(f"unsupported index {k!r} of type {type(k).__name__}: use "
                            "ints, slices, Ellipsis, None, or one integer/boolean array")
        start.append(a)
        stop.append(b)
        step.append(c)
        axis += 1
    return tuple(start), tuple(stop), tuple(step), tuple(out_shape)


def _advanced_indices(key, shape):
    """GatherNd indices for one integer array (axis 0) or one boolean mask, else None."""
    if isinstance(key, (list, np.ndarray)):
        arr = np.asarray(key)
        if arr.dtype == bool:
            if arr.shape != tuple(shape[:arr.ndim]):
                raise IndexError(f"boolean index of shape {arr.shape} does not match the "
                                 f"array of shape {tuple(shape)}")
            return np.stack(np.nonzero(arr))
        if arr.dtype.kind in "iu":
            return arr[None]
    return None


def getitem(x, key):
    """Indexing of a Variable or NdArray with numpy's basic rules.

    Supported keys: ints (negative count from the end; the axis is removed),
    slices (any step, including negative ones), ``Ellipsis``, ``None``/``np.newaxis``
    (a new axis of size 1), and tuples of those; also a single integer array
    (taking rows along axis 0) or a boolean mask, both through ``GatherNd``.
    Basic keys become one ``Slice`` (always, as in nnabla) followed by a
    ``Reshape`` when axes are removed or added, so gradients flow back to ``x``.

    Raises:
        IndexError: for an index out of range, too many indices, several Ellipsis.
        TypeError: for any other kind of key.

    >>> import numpy as np, nnabla as nn
    >>> a = nn.NdArray.from_numpy_array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    >>> a[0].shape, a[..., :2, None].shape, a[:, ::-1, -1].data[0].tolist()
    ((3, 4), (2, 3, 2, 1), [11.0, 7.0, 3.0])
    """
    shape = tuple(x.shape)
    indices = _advanced_indices(key, shape)
    if indices is not None:
        return call_function("GatherNd", x, _as_index_array(x, indices, "__getitem__"))
    start, stop, step, out_shape = _basic_plan(_expand_ellipsis(key, len(shape)), shape)
    y = call_function("Slice", x, start=start, stop=stop, step=step)
    if tuple(y.shape) != out_shape:
        y = call_function("Reshape", y, shape=out_shape, inplace=True)
    return y
