"""Embedding as a class (``nnabla.experimental.parametric_function_class.embed``)."""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ...initializer import UniformInitializer
from .module import Module, _new_parameter

__all__ = ["Embed"]


class Embed(Module):
    """Embedding (a lookup of rows of ``W`` by integer index) holding its own matrix (see
    :func:`nnabla.parametric_functions.embed`).

    Args:
        n_inputs (int): number of possible indices (vocabulary size).
        n_features (int): features per embedding.
        w_init (initializer or numpy.ndarray): default uniform in
            ``(-sqrt(3), sqrt(3))``.
        fix_parameters (bool): the matrix gets ``need_grad=False``.

    Attributes:
        W (nnabla.Variable): ``(n_inputs, n_features)``.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.experimental.parametric_function_class.embed import Embed
        >>> Embed(10, 4)(nn.Variable((2, 3))).shape
        (2, 3, 4)
    """

    def __init__(self, n_inputs, n_features, w_init=None, fix_parameters=False):
        if w_init is None:
            w_init = UniformInitializer((-np.sqrt(3.0), np.sqrt(3.0)))
        self.W = _new_parameter(w_init, (n_inputs, n_features), not fix_parameters, "Embed")

    def __call__(self, inp):
        """Look up the rows of ``W`` indexed by ``inp``."""
        return F.embed(inp, self.W)
