"""``_get_dropout_mask``: the mask a dropout drew, as nnabla's module of that name offers it."""
from __future__ import annotations


def _get_dropout_mask(x):
    """The 0/1 mask of the ``F.dropout`` applied to Variable ``x`` (a Variable).

    Raises:
        RuntimeError: no dropout consumes ``x``, or it has not run yet.
    """
    from .backward_function.stochastic import dropout_mask
    return dropout_mask(x)
