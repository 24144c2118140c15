"""Indexing of Variables and NdArrays: ``x[key]`` and ``x[key] = value``, numpy's rules.

Basic keys (ints, slices, Ellipsis, None) read through one ``Slice`` (and a ``Reshape``)
as nnabla does. Advanced keys follow numpy:

- integer arrays (lists, tuples, numpy arrays) on the leading axes, broadcast together,
  possibly with ints and None: one ``GatherNd``; the new axes go where numpy puts them
  (before the indexed axes when the arrays are not adjacent);
- a boolean mask (numpy, list of bools, or a boolean NdArray/Variable, read when the graph
  is built, since it decides the output shape): ``GatherNd`` of its ``nonzero`` positions;
- integer NdArrays/Variables: stacked into the ``GatherNd`` indices inside the graph, so
  changing their values later changes what a static graph reads;
- any other mix (arrays with slices or Ellipsis): ``GatherNd`` on the flattened array at the
  positions numpy selects (nnabla raises NotImplementedError there).

Writing into a Variable builds a graph node (nnabla's ``Variable.__setitem__`` too): the
variable becomes ``where(selected, scattered values, previous values)``, so gradients reach
both the written values (at the selected positions) and the previous graph (elsewhere).
Writing into an NdArray writes its values in place.
"""
from __future__ import annotations

import numbers
import weakref

import numpy as np

from . import _graph
from ._adapters.array import getitem as basic_getitem
from ._dispatch import call_function as _call
from ._nd_array import NdArray
from ._variable import Variable, VarNode

_SEQUENCES = (list, tuple, np.ndarray, NdArray, Variable)


def _as_key_tuple(key):
    """``key`` as a tuple of per-axis entries, and whether it is advanced."""
    if isinstance(key, _SEQUENCES) and not isinstance(key, tuple):
        return (key,), True
    if isinstance(key, tuple):
        return key, any(isinstance(k, _SEQUENCES) for k in key)
    if key is None or key is Ellipsis or isinstance(key, (slice, numbers.Integral, np.integer)):
        return (key,), False
    raise TypeError(f"nnabla indexing: invalid index {key!r} of type {type(key).__name__}; "
                    "expected ints, slices, Ellipsis, None, or integer/boolean arrays")


def _is_array_handle(k):
    return isinstance(k, (NdArray, Variable))


def _handle_values(k):
    return k.data.data if isinstance(k, Variable) else k.data


def _stored_dtype(k):
    """The dtype ``k`` (NdArray or Variable) holds its values in (never raises)."""
    return (k._node.data if isinstance(k, Variable) else k._array).dtype


def _is_bool_handle(k):
    return _is_array_handle(k) and _stored_dtype(k) == np.bool_


def _numpy_key(key):
    """The key with boolean NdArrays/Variables read into numpy (they fix the output shape)."""
    out = []
    for k in key:
        if _is_bool_handle(k):
            out.append(np.asarray(_handle_values(k), dtype=bool))
        elif _is_array_handle(k):
            out.append(np.asarray(_handle_values(k)).astype(np.int64))
        elif isinstance(k, (list, tuple)):
            arr = np.asarray(k)
            if arr.size == 0:
                arr = arr.astype(np.int64)
            out.append(arr)
        else:
            out.append(k)
    return tuple(out)


def _check_index_array(arr):
    if arr.dtype.kind not in "iub":
        raise IndexError(f"nnabla indexing: arrays used as indices must be of integer or "
                         f"boolean type; given {arr.dtype}")


# -- plans -----------------------------------------------------------------------------------
def _gather_plan(key, shape):
    """(indices (m, ...), result shape) when every non-None entry is an int or an index
    array (or one boolean mask); None when the key mixes in slices or Ellipsis."""
    entries = [k for k in key if k is not None]
    if any(isinstance(k, slice) or k is Ellipsis for k in entries):
        return None
    if len(entries) == 1 and isinstance(entries[0], np.ndarray) and entries[0].dtype == bool:
        mask = entries[0]
        if mask.shape != tuple(shape[:mask.ndim]):
            raise IndexError(f"nnabla indexing: boolean index of shape {mask.shape} does not "
                             f"match the leading axes of an array of shape {tuple(shape)}")
        indices = np.stack(np.nonzero(mask)) if mask.ndim else np.zeros((0, 1), np.int64)
        adv_shape, used = indices.shape[1:], mask.ndim
    else:
        arrays = [np.asarray(k) for k in entries]
        for arr in arrays:
            _check_index_array(arr)
            if arr.dtype == bool:
                return None         # a mask beside other indices: numpy's general rule
        if len(arrays) > len(shape):
            raise IndexError(f"nnabla indexing: too many indices for a {len(shape)}-D array: "
                             f"{len(arrays)} given")
        try:
            arrays = np.broadcast_arrays(*arrays)
        except ValueError:
            raise IndexError("nnabla indexing: shape mismatch: index arrays could not be "
                             f"broadcast together with shapes "
                             f"{[np.shape(k) for k in entries]}") from None
        for axis, arr in enumerate(arrays):
            n = shape[axis]
            if arr.size and (arr.max() >= n or arr.min() < -n):
                raise IndexError(f"nnabla indexing: index out of bounds for axis {axis} "
                                 f"with size {n}")
        indices = np.stack([a.astype(np.int64) for a in arrays])
        adv_shape, used = arrays[0].shape, len(arrays)
    return indices, _result_shape(key, adv_shape, tuple(shape[used:]))


def _result_shape(key, adv_shape, rest):
    """numpy's placement of the None axes around the indexed subspace."""
    positions = [i for i, k in enumerate(key) if k is not None]
    first, last = positions[0], positions[-1]
    n_new = sum(k is None for k in key)
    between = sum(key[i] is None for i in range(first, last + 1))
    if between:                     # not adjacent: the indexed subspace goes first
        return tuple(adv_shape) + (1,) * n_new + rest
    before = sum(k is None for k in key[:first])
    return (1,) * before + tuple(adv_shape) + (1,) * (n_new - before) + rest


def _flat_positions(key, shape):
    """Positions (into the flattened array) of the elements numpy's ``x[key]`` selects."""
    size = int(np.prod(shape, dtype=np.int64))
    try:
        return np.arange(size, dtype=np.int64).reshape(shape)[key]
    except IndexError as e:
        raise IndexError(f"nnabla indexing: {e}") from None


def _handle_indices(key):
    """Integer NdArrays/Variables of ``key`` (None entries dropped), or None."""
    entries = [k for k in key if k is not None]
    if not any(_is_array_handle(k) and not _is_bool_handle(k) for k in entries):
        return None
    if not all(_is_array_handle(k) for k in entries):
        raise NotImplementedError("nnabla indexing: integer NdArray/Variable indices can only "
                                  "be combined with other NdArray/Variable indices and None; "
                                  f"given {key!r}")
    return entries


def _stacked(x, handles):
    """The GatherNd/ScatterNd indices (m, ...) built from index handles inside the graph."""
    if isinstance(x, NdArray):
        handles = [h.data if isinstance(h, Variable) else h for h in handles]
    else:
        handles = [Variable(h.shape).apply(data=h) if isinstance(h, NdArray) else h
                   for h in handles]
    return _call("Stack", *handles, axis=0)


# -- reading ---------------------------------------------------------------------------------
def getitem(x, key):
    """``x[key]`` for a Variable or NdArray (see the module docstring for the rules).

    Raises:
        IndexError: an index out of range, too many indices, arrays that do not broadcast.
        TypeError: a key of another type.

    >>> import numpy as np, nnabla as nn
    >>> a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> a[[1, 0], [2, 0]].data.tolist(), a[a.data > 3].data.tolist()
    ([5.0, 0.0], [4.0, 5.0])
    """
    entries, advanced = _as_key_tuple(key)
    if not advanced:
        return basic_getitem(x, key)
    handles = _handle_indices(entries)
    shape = tuple(x.shape)
    if handles is not None:
        y = _call("GatherNd", x, _stacked(x, handles))
        idx_shape = handles[0].shape
        out_shape = _result_shape(entries, idx_shape, tuple(y.shape[len(idx_shape):]))
        return y if out_shape == y.shape else _reshape(y, out_shape)
    np_key = _numpy_key(entries)
    plan = _gather_plan(np_key, shape)
    if plan is not None:
        indices, out_shape = plan
        y = _call("GatherNd", x, _constant(x, indices))
    else:
        positions = _flat_positions(np_key, shape)
        flat = _reshape(x, (int(np.prod(shape, dtype=np.int64)),))
        y = _call("GatherNd", flat, _constant(x, positions.reshape(1, -1)))
        out_shape = positions.shape
    return y if tuple(y.shape) == tuple(out_shape) else _reshape(y, out_shape)


def _reshape(x, shape):
    return _call("Reshape", x, shape=tuple(shape), inplace=True)


def _constant(like, values):
    """``values`` (numpy) as an NdArray or a constant Variable, matching ``like``."""
    if isinstance(like, NdArray):
        return NdArray.from_numpy_array(values)
    return Variable.from_numpy_array(values)


# -- writing ---------------------------------------------------------------------------------
def setitem(x, key, value):
    """``x[key] = value`` for a Variable (a graph node) or an NdArray (in place)."""
    entries, _ = _as_key_tuple(key)
    if isinstance(x, NdArray):
        _set_ndarray(x, entries, value)
    else:
        _set_variable(x, entries, value)


def _set_ndarray(x, entries, value):
    handles = _handle_indices(entries)
    if handles is not None:
        np_key = tuple(np.asarray(_handle_values(h)).astype(np.int64) for h in handles)
    else:
        np_key = _numpy_key(entries)
    if isinstance(value, Variable):
        value = value.d
    elif isinstance(value, NdArray):
        value = value.data
    data = x.data
    try:
        data[np_key] = value
    except (IndexError, ValueError) as e:
        raise type(e)(f"nnabla indexing: NdArray[{entries!r}] = value: {e}") from None
    x.data = data       # a write: counts as a modification of the array


def _value_variable(value, dtype):
    if isinstance(value, Variable):
        return value
    if isinstance(value, NdArray):
        return Variable(value.shape).apply(data=value)
    return Variable.from_numpy_array(np.asarray(value, dtype=dtype))


def _set_variable(x, entries, value):
    value = _value_variable(value, _stored_dtype(x))
    shape = tuple(x.shape)
    handles = _handle_indices(entries)
    if handles is not None:
        indices = _stacked(x, handles)
        m = len(handles)
        target = tuple(handles[0].shape) + shape[m:]
        ones = _call("Constant", val=1.0, shape=target)
        selected = _call("ScatterNd", ones, indices, None, shape=shape, add=False)
        scattered = _call("ScatterNd", _broadcast(value, target), indices, None, shape=shape,
                          add=False)
    else:
        positions = _flat_positions(_numpy_key(entries), shape)
        mask = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=bool)
        mask[positions.ravel()] = True
        selected = Variable.from_numpy_array(mask.reshape(shape))
        flat_value = _reshape(_broadcast(value, positions.shape), (positions.size,))
        size = int(mask.size)
        scattered = _reshape(_call("ScatterNd", flat_value,
                                   Variable.from_numpy_array(positions.reshape(1, -1)), None,
                                   shape=(size,), add=False), shape)
    previous = _take_over(x)
    result = _call("Where", selected, scattered, previous)
    _graph.rewire_on(x._node, result._node)


def _broadcast(value, shape):
    """``value`` broadcast to ``shape`` (numpy's trailing alignment)."""
    shape = tuple(shape)
    if tuple(value.shape) == shape:
        return value
    if len(value.shape) > len(shape):
        extra = value.shape[:len(value.shape) - len(shape)]
        if any(s != 1 for s in extra):
            raise ValueError(f"nnabla indexing: could not broadcast a value of shape "
                             f"{tuple(value.shape)} into the indexed shape {shape}")
        value = _reshape(value, value.shape[len(extra):])
    padded = (1,) * (len(shape) - len(value.shape)) + tuple(value.shape)
    if any(v != s and v != 1 for v, s in zip(padded, shape)):
        raise ValueError(f"nnabla indexing: could not broadcast a value of shape "
                         f"{tuple(value.shape)} into the indexed shape {shape}")
    if padded != tuple(value.shape):
        value = _reshape(value, padded)
    return _call("Broadcast", value, shape=shape)


def _take_over(x):
    """A new variable standing for ``x`` as it was: it takes x's data, grad and parent."""
    node = x._node
    previous = Variable.__new__(Variable)
    taken = VarNode(node.data.shape, node.need_grad)
    taken.stop = node.stop
    previous._node = taken
    taken.owner = weakref.ref(previous)
    _graph.rewire_on(taken, node)
    return previous
