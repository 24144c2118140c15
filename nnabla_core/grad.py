"""The module behind ``nn.grad``: ``import nnabla.grad`` and ``from nnabla.grad import grad``
work as in nnabla (the package attribute ``nnabla.grad`` stays the function).

:func:`grad` builds the gradients of ``outputs`` with respect to ``inputs`` as new graph
variables, which can be differentiated again (see :mod:`nnabla._grad`).
"""
from ._grad import grad

__all__ = ["grad"]
