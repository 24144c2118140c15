"""The kernel contract: what a backend implements for one function, and what the engine reads.

A kernel class is registered per (function type name, backend, type config) through the
``nnabla_kernels`` hook; it must subclass :class:`Kernel`. The engine binds one instance
to one function instance (or, when ``shareable``, to every call with the same shapes and
arguments) and calls it on native arrays of the backend's array family
(:mod:`nnabla.array_family`):

- ``forward(xs) -> ys``: ``xs`` lists one array per input (``None`` for an absent optional
  input), in the compute type (float32; int64 for integer inputs; inputs the spec stores
  in their own dtype come as stored). Returns a sequence of output arrays. The engine
  converts float outputs to the storage type, fixes their shapes and stores them.
  A kernel may update an input in place (running statistics): the spec lists those
  inputs (``mutates``), and the engine hands them over as writable heads.
- ``backward(xs, ys, dys, propagate_down) -> grads``: one gradient array (or ``None``) per
  input. Only the inputs and outputs the spec's ``backward_needs`` names are guaranteed to
  hold data. The engine applies nnabla's ``accum`` rule (add or overwrite) and the storage
  type; kernels never do. The engine keeps returned arrays and may write into them (a
  solver updates gradients in place): a kernel must not keep references to what it
  returns. Returning an input or a view of one is fine: the engine copies those.

Example:
    >>> import numpy as np
    >>> from nnabla.kernel import Kernel
    >>> class Square(Kernel):
    ...     def forward(self, xs):
    ...         return (xs[0] * xs[0],)
    ...     def backward(self, xs, ys, dys, propagate_down):
    ...         return [2 * xs[0] * dys[0] if propagate_down[0] else None]
    >>> Square.accepts({}) is None
    True
"""
from __future__ import annotations

import numpy as np

from . import random as nn_random

__all__ = ["Kernel", "unbroadcast", "rng_for"]


class Kernel:
    """Base class of every kernel.

    Attributes the engine sets before ``setup()`` runs:
        xp: the array namespace of the bound backend's family (``numpy``, ``cupy``...).
        device_id (str): the context's ``device_id`` (``''`` or ``'0'`` on the host): a
            device backend runs the kernel, and allocates its outputs, on that device.
        spec: the function's spec entry (``spec.name``, ``spec.api_name``).
        in_shapes, out_shapes (list of tuple): the shapes this instance is bound to.
        storage_dtype: ``numpy.float16`` under ``type_config='half'``, else ``None``. A
            kernel fusing several functions rounds between stages to it.
        Each function argument, by its nnabla name (``self.axis``, ``self.pad``).

    Attributes a kernel class may set:
        shareable (bool): keeps no state from forward to backward, so one instance may
            serve every call with the same shapes and arguments. Default False.
        keeps_input_grads (bool): backward leaves the inputs' existing gradients as the
            ones to propagate (``F.sink(one_input_grad=False)``). Default False.
        forward_ufunc (tuple or None): for a one-input, one-output kernel whose
            ``forward(xs)`` is exactly ``(f(xs[0], *operands),)``, the tuple
            ``(f, *operands)``, set in ``setup()`` (``(self.xp.add, self.v)``): the engine
            may call ``f`` instead of ``forward``, so whatever wraps ``forward`` (a device
            switch) must wrap ``f`` too. Default None.

    Methods a kernel class may define:
        accepts(args) (classmethod): ``None`` to accept these arguments, or a reason
            (str) to decline; the resolver then tries the context's next backend.
        setup(): precompute what depends only on arguments and shapes.
        recompute(xs): the forward pass again, repeating the last pass's random draws
            (stochastic kernels; the default is ``forward``).
    """

    xp = np
    device_id = ""
    shareable = False
    keeps_input_grads = False
    forward_ufunc = None
    storage_dtype = None

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
        raise NotImplementedError(f"{self.spec.api_name}: {type(self).__name__} has no forward")

    def backward(self, xs, ys, dys, propagate_down):
        raise NotImplementedError(f"{self.spec.api_name} has no backward")

    def recompute(self, xs):
        """Forward again for ``recompute``; stochastic kernels replay their draws."""
        return self.forward(xs)


def declines_some_arguments(cls):
    """Whether ``cls`` overrides :meth:`Kernel.accepts` (else resolution skips the call)."""
    accepts = getattr(cls, "accepts", None)
    return accepts is not None and getattr(accepts, "__func__", None) is not Kernel.accepts.__func__


def unbroadcast(xp, g, shape):
    """Sum ``g`` over the axes that were broadcast from ``shape`` (same rank)."""
    if g.shape == tuple(shape):
        return g
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, g.shape)) if a == 1 and b != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape)


def rng_for(seed):
    """The random source a stochastic kernel draws from (a ``numpy.random.RandomState``).

    ``seed == -1`` means nnabla's global function generator (``nn.seed``); any other value
    gives a generator of its own, seeded once. Draws are made on the host for every
    backend, so a seed gives the same numbers on every device; a device kernel moves them
    with ``xp.asarray``.
    """
    return nn_random.function_rng(seed)
