"""The ``boxed`` array family: every operation the core may do on a Box."""
from __future__ import annotations

import numpy as np
from nnabla.array_family import ArrayFamily

from . import TRANSFERS, Box


def to_numpy(a):
    TRANSFERS["to_host"] += 1
    return np.array(a.value)


def from_numpy(n):
    TRANSFERS["to_device"] += 1
    return Box(np.array(n))


class xp:
    """The boxed array namespace (the engine hands it to kernels as ``kernel.xp``)."""

    ndarray = Box
    float32 = np.float32


def _iadd(a, b):
    a.value += b.value
    return a


BOXED = ArrayFamily(
    "boxed", array_type=Box, xp=xp, to_numpy=to_numpy, from_numpy=from_numpy,
    zeros=lambda shape, dtype: Box(np.zeros(shape, dtype)),
    full=lambda shape, value, dtype: Box(np.full(shape, value, dtype)),
    asarray=lambda a: Box(np.asarray(a)),
    astype=lambda a, dtype: Box(a.value.astype(dtype)),
    copy=lambda a: Box(a.value.copy()),
    reshape=lambda a, shape: Box(a.value.reshape(shape)),
    add=lambda a, b: Box(np.asarray(a.value + b.value)),
    iadd=_iadd,
    nbytes=lambda a: a.value.nbytes,
    owner=lambda a: a.value if a.value.base is None else a.value.base,
)
