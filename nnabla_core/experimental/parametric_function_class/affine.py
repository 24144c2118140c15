"""Affine (fully connected) layer as a class
(``nnabla.experimental.parametric_function_class.affine``)."""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ...initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .module import Module, _new_parameter

__all__ = ["Affine", "Linear"]


class Affine(Module):
    """The affine layer ``y = x W + b`` holding its own parameters (see
    :func:`nnabla.parametric_functions.affine`).

    Args:
        n_inmaps (int): input features per sample (product of the input's dimensions
            from ``base_axis``).
        n_outmaps (int or tuple of int): output features (a tuple is flattened).
        base_axis (int): dimensions before it are sample dimensions.
        w_init (initializer or numpy.ndarray): weight initializer (default: uniform within
            :func:`~nnabla.initializer.calc_uniform_lim_glorot`).
        b_init (initializer or numpy.ndarray): bias initializer (default: zeros).
        fix_parameters (bool): parameters get ``need_grad=False``.
        rng (numpy.random.RandomState): random source of the default weight initializer.
        with_bias (bool): add the bias term.

    Attributes:
        W (nnabla.Variable): ``(n_inmaps, prod(n_outmaps))``.
        b (nnabla.Variable or None): ``(prod(n_outmaps),)``.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.experimental.parametric_function_class.affine import Affine
        >>> fc = Affine(12, 5)
        >>> fc(nn.Variable((2, 3, 4))).shape
        (2, 5)
    """

    def __init__(self, n_inmaps, n_outmaps, base_axis=1, w_init=None, b_init=None,
                 fix_parameters=False, rng=None, with_bias=True):
        outmaps = list(n_outmaps) if hasattr(n_outmaps, "__iter__") else [n_outmaps]
        n_outmap = int(np.prod(outmaps))
        if w_init is None:
            w_init = UniformInitializer(calc_uniform_lim_glorot(n_inmaps, n_outmap), rng=rng)
        if with_bias and b_init is None:
            b_init = ConstantInitializer()
        self.W = _new_parameter(w_init, (n_inmaps, n_outmap), not fix_parameters, "Affine")
        self.b = _new_parameter(b_init, (n_outmap,), not fix_parameters, "Affine") \
            if with_bias else None
        self.base_axis = base_axis

    def __call__(self, inp):
        """Apply the layer to ``inp``."""
        return F.affine(inp, self.W, self.b, self.base_axis)


Linear = Affine
