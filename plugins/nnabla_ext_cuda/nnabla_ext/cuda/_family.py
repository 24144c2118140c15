"""The ``cuda`` array family: CuPy device arrays (or the emulation's), as the core sees them."""
from __future__ import annotations

from nnabla.array_family import ArrayFamily

from ._namespace import DeviceNamespace

FAMILY_NAME = "cuda"


def _cupy_owner(a):
    # views of one allocation share its Memory object (MemoryPointer.mem)
    return a.data.mem


def _emulated_owner(a):
    base = a._a.base
    return a._a if base is None else base


def make_family(runtime):
    """The :class:`~nnabla.array_family.ArrayFamily` of ``runtime``'s arrays.

    Kernels get ``xp``, a :class:`~._namespace.DeviceNamespace` over ``cupy``. Host
    transfers go through ``cupy.asnumpy`` and ``cupy.array`` (copies);
    everything else is the default call on ``cupy`` or on the array (``cupy.zeros``, ``a.astype``).
    """
    cp = runtime.cupy
    return ArrayFamily(
        FAMILY_NAME, array_type=cp.ndarray, xp=DeviceNamespace(cp),
        to_numpy=cp.asnumpy, from_numpy=cp.array,
        owner=_emulated_owner if runtime.emulated else _cupy_owner)
