"""Helpers shared by backward functions."""
from __future__ import annotations


def F():
    import nnabla.functions as functions
    return functions


def reduce_to(g, shape):
    """Sum ``g`` over the axes where ``shape`` has size 1 (undo same-rank broadcasting)."""
    if g is None or tuple(g.shape) == tuple(shape):
        return g
    axes = [i for i, (a, b) in enumerate(zip(shape, g.shape)) if a == 1 and b != 1]
    return F().sum(g, axis=axes, keepdims=True)
