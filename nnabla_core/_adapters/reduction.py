"""``F.*`` reductions whose Python signature differs from the function type's.

``axis`` may be an int, a list/tuple of ints, or None (every axis); each
adapter turns it into the ``axes`` list of the function type.
"""
from __future__ import annotations

import warnings

from nnabla._adapters import axes_list
from nnabla._dispatch import call_function
from nnabla._spec.args import adapter_args

__all__ = ["sum", "mean", "max", "min", "prod", "norm", "reduce"]


def _axes(x, axis):
    """``axis`` as the function type's ``axes``: None means every axis."""
    if axis is None:
        return list(range(len(x.shape)))
    return axes_list(axis)


def sum(x, axis=None, keepdims=False):  # noqa: A001 - nnabla's name
    """Sum of ``x`` over ``axis``.

    Args:
        x (~nnabla.Variable): input.
        axis (int, list of int or None): axes to reduce; None reduces every axis.
        keepdims (bool): keep the reduced axes with size 1.

    Returns:
        ~nnabla.Variable: the sums (0-d when every axis is reduced without keepdims).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> F.sum(a, axis=1).data.tolist(), F.sum(a).data.tolist()
    ([3.0, 12.0], 15.0)
    """
    return call_function("Sum", x, axes=_axes(x, axis), keep_dims=keepdims)


def mean(x, axis=None, keepdims=False):
    """Mean of ``x`` over ``axis`` (None: every axis); arguments as :func:`sum`.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    >>> F.mean(a, axis=0, keepdims=True).data.tolist()
    [[1.5, 2.5, 3.5]]
    """
    return call_function("Mean", x, axes=_axes(x, axis), keep_dims=keepdims)


def _extreme(type_name, x, axis, keepdims, with_index, only_index):
    axes = _axes(x, axis)
    with_index, only_index = adapter_args(type_name.lower(), with_index=with_index,
                                          only_index=only_index)
    if only_index:
        # The engine fixes output dtypes by position, so asking for both outputs is
        # how the index keeps its uint64 dtype; only the index is returned.
        return call_function(type_name, x, axes=axes, keep_dims=keepdims, with_index=True,
                             only_index=False, n_outputs=2)[1]
    n_outputs = 2 if with_index else 1
    return call_function(type_name, x, axes=axes, keep_dims=keepdims, with_index=with_index,
                         only_index=False, n_outputs=n_outputs)


def max(x, axis=None, keepdims=False, with_index=False, only_index=False):  # noqa: A001
    """Maximum of ``x`` over ``axis``, and optionally where it is.

    Args:
        x (~nnabla.Variable): input.
        axis (int, list of int or None): axes to reduce; None reduces every axis.
        keepdims (bool): keep the reduced axes with size 1.
        with_index (bool): also return the index of the maximum.
        only_index (bool): return only the index.

    Returns:
        ~nnabla.Variable, or a tuple ``(values, indices)`` with ``with_index``.
        Indices are uint64 flat positions inside the reduced axes (first one on ties).
        The gradient flows only to the position of the maximum.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.array([[1, 5, 2], [7, 0, 3]], np.float32))
    >>> y, i = F.max(a, axis=1, with_index=True)
    >>> y.data.tolist(), i.data.tolist(), str(i.data.dtype)
    ([5.0, 7.0], [1, 0], 'uint64')
    """
    return _extreme("Max", x, axis, keepdims, with_index, only_index)


def min(x, axis=None, keepdims=False, with_index=False, only_index=False):  # noqa: A001
    """Minimum of ``x`` over ``axis``, and optionally where it is; as :func:`max`.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.array([[1, 5, 2], [7, 0, 3]], np.float32))
    >>> F.min(a, axis=1, only_index=True).data.tolist()
    [0, 1]
    """
    return _extreme("Min", x, axis, keepdims, with_index, only_index)


def prod(x, axis=None, keepdims=False):
    """Product of ``x`` over ``axis`` (None: every axis); arguments as :func:`sum`.

    The gradient is the product of the other elements of each reduced block
    (exact also where x is zero).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    >>> F.prod(a, axis=1).data.tolist()
    [6.0, 120.0]
    """
    return call_function("Prod", x, axes=_axes(x, axis), keep_dims=keepdims)


def norm(x, p=None, axis=None, keepdims=False):
    """p-norm of ``x`` over ``axis``: ``(sum |x|^p)^(1/p)``.

    Args:
        p (float or None): order, at least 1; None means 2.
        axis, keepdims: as :func:`sum`.

    Raises:
        ValueError: if ``p < 1``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.array([[3, -4], [0, 1]], np.float32))
    >>> F.norm(a, axis=1).data.tolist(), float(F.norm(a, p=1).data)
    ([5.0, 1.0], 8.0)
    """
    p = 2.0 if p is None else p
    return call_function("Norm", x, p=p, axes=_axes(x, axis), keep_dims=keepdims)


def reduce(x, op="sum"):
    """Deprecated whole-array reduction: ``op`` is ``'sum'`` or ``'mean'`` (0-d output).

    Raises:
        ValueError: for another ``op``.
    """
    warnings.warn("Deprecated API. Use ``sum`` or ``mean`` instead.", DeprecationWarning,
                  stacklevel=2)
    if op == "sum":
        return call_function("ReduceSum", x)
    if op == "mean":
        return call_function("ReduceMean", x)
    raise ValueError(f"F.reduce: argument 'op' is {op!r}; expected 'sum' or 'mean'")
