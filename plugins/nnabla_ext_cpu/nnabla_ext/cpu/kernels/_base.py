"""The kernel calling convention shared by every backend written against ``xp``.

A kernel instance is bound to one function instance. The engine calls

- ``forward(xs) -> outputs``: ``xs`` are native arrays (float32 compute type,
  int64 for integer inputs); it returns a tuple of output arrays.
- ``backward(xs, ys, dys, propagate_down) -> grads``: returns one array (or
  ``None``) per input. Only the inputs and outputs named in the spec's
  ``backward_needs`` are guaranteed to hold data; others may be ``None``.
  The engine applies nnabla's ``accum`` rule (add or overwrite), so kernels
  never do.

Arguments of the function are set as attributes (``self.axis``), together with
``self.in_shapes`` and ``self.out_shapes``.
"""
from __future__ import annotations

import numpy as np


class Kernel:
    """Base class of a kernel; subclasses override ``forward`` and ``backward``."""

    xp = np
    shareable = False   # True: keeps no per-call state, one instance may serve many calls
    storage_dtype = None  # set by the engine to float16 under type_config='half'

    def __init__(self, spec, args, in_shapes, out_shapes):
        self.__dict__.update(args)
        self.spec = spec
        self.in_shapes = in_shapes
        self.out_shapes = out_shapes
        self.setup()

    def setup(self):
        """Precompute what depends only on arguments and shapes."""

    @classmethod
    def accepts(cls, args):
        """Return ``None`` to accept these arguments, or a reason to decline."""
        return None

    def forward(self, xs):
        raise NotImplementedError

    def backward(self, xs, ys, dys, propagate_down):
        raise NotImplementedError(f"{self.spec.api_name} has no backward")


def unbroadcast(xp, g, shape):
    """Sum ``g`` over the axes that were broadcast from ``shape`` (same rank)."""
    if g.shape == tuple(shape):
        return g
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, g.shape)) if a == 1 and b != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


def rng_for(seed):
    """The random generator a stochastic kernel draws from.

    ``seed == -1`` means nnabla's global function seed (``nn.seed``); any other
    value gives a generator of its own, seeded once.
    """
    from nnabla import random as nn_random
    return nn_random.function_rng(seed)
