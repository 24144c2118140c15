"""``nnabla.normalization_functions``: axis and affine helpers of the normalization layers.

In nnabla this module also holds the graph-level compositions of the
normalization functions; here those are ordinary spec'd functions
(:mod:`nnabla._spec.normalization`), and this module keeps the small helpers
nnabla exposes under these names (user code and nnabla's tests call them to
build reference normalizations). They work on ints, numpy arrays and Variables.

Example:
    >>> from nnabla.normalization_functions import _force_list, _get_axes_excluding
    >>> _force_list(1), _get_axes_excluding(4, [0, -1])
    ([1], [1, 2])
"""
from __future__ import annotations


def _force_list(axis):
    """``axis`` as a list: an iterable's items, or the single value in a one-item list."""
    if hasattr(axis, "__iter__"):
        return list(axis)
    return [axis]


def _get_axes_excluding(ndim, axes):
    """The axes ``0 .. ndim-1`` that are not in ``axes`` (negative axes count from the end)."""
    excluded = {a + ndim if a < 0 else a for a in _force_list(axes)}
    return [i for i in range(ndim) if i not in excluded]


def _apply_affine(x, scale=None, bias=None):
    """``x * scale + bias``, skipping a term given as ``None``.

    Formula: :math:`y = \\gamma x + \\beta`.
    """
    if scale is not None:
        x = x * scale
    if bias is not None:
        x = x + bias
    return x
