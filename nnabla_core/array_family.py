"""Array families: the memory a backend's kernels work on, and what the core may do with it.

A family is one kind of native array (numpy buffers on the host, CuPy buffers on a GPU,
a third party's device arrays). The core never touches a family's arrays except through
its :class:`ArrayFamily`, so a backend whose arrays refuse numpy conversion works end to
end. The arrays themselves need only ``.shape`` (tuple of int) and ``.dtype`` (a numpy
dtype, or an object equal to one); everything else goes through the family.

The host family ``'cpu'`` (numpy) is described here, because ``NdArray.data`` and
``Variable.d`` are numpy arrays by nnabla's API: it is the family user-facing reads land
in. Every other family comes from a plugin's ``nnabla_array_classes`` hook.

Example: a family whose arrays wrap numpy privately (see the toy test backend)::

    class Box:
        def __init__(self, value): self.value = value
        shape = property(lambda self: self.value.shape)
        dtype = property(lambda self: self.value.dtype)

    BOX = ArrayFamily("box", array_type=Box, xp=box_namespace,
                      to_numpy=lambda a: a.value.copy(), from_numpy=lambda n: Box(n.copy()))
"""
from __future__ import annotations

import numpy as np

__all__ = ["ArrayFamily", "HOST", "HOST_FAMILY", "family", "register_family", "families"]


class ArrayFamily:
    """How the core allocates, converts, copies and accumulates arrays of one family.

    Args:
        name (str): the family name an ``Extension`` refers to (``'cpu'``, ``'cuda'``).
        array_type (type or tuple of types): the class(es) of this family's arrays.
        xp: the array namespace of the family (``numpy``, ``cupy``, ...). The engine gives
            it to every kernel it binds to this family as ``kernel.xp``.
        to_numpy (callable): array -> numpy array (a copy the caller owns). Used only when
            data crosses to another family, never on the hot path of one family.
        from_numpy (callable): numpy array -> array of this family (a copy).
        zeros, full, asarray, astype, copy, reshape, add, iadd, nbytes, owner (callables,
            optional): override the defaults, which call ``xp.zeros(shape, dtype)``,
            ``xp.full(shape, value, dtype)``, ``xp.asarray(a)`` (a scalar a kernel
            returned), ``a.astype(dtype)``, ``a.copy()``, ``a.reshape(shape)``,
            ``a + b``, ``a += b``, ``a.nbytes`` and ``a.base or a`` (the object owning
            ``a``'s memory: a gradient that shares it with a kernel's input is copied
            before it is stored).

    Every callable may be slow only where the device forces it; the engine calls
    ``astype``, ``add``/``iadd`` and ``zeros`` on the training hot path.
    """

    def __init__(self, name, *, array_type, xp, to_numpy, from_numpy, zeros=None, full=None,
                 asarray=None, astype=None, copy=None, reshape=None, add=None, iadd=None,
                 nbytes=None, owner=None):
        if not isinstance(name, str) or not name:
            raise TypeError(f"ArrayFamily: argument 'name' must be a non-empty str; "
                            f"given {name!r}")
        for arg, value in (("to_numpy", to_numpy), ("from_numpy", from_numpy)):
            if not callable(value):
                raise TypeError(f"ArrayFamily {name!r}: argument {arg!r} must be callable; "
                                f"given {value!r}")
        self.name = name
        self.array_type = array_type
        self.xp = xp
        self.to_numpy = to_numpy
        self.from_numpy = from_numpy
        self.zeros = zeros or (lambda shape, dtype: xp.zeros(shape, dtype))
        self.full = full or (lambda shape, value, dtype: xp.full(shape, value, dtype))
        self.asarray = asarray or (lambda a: xp.asarray(a))
        self.astype = astype or _astype
        self.copy = copy or _copy
        self.reshape = reshape or _reshape
        self.add = add or _add
        self.iadd = iadd or _iadd
        self.nbytes = nbytes or _nbytes
        self.owner = owner or _owner

    def for_device(self, device_id):
        """The family of this kind whose arrays live on device ``device_id`` (a context's
        ``device_id``). The engine binds kernels and solvers to it, so arrays of contexts on
        different devices are different heads. A plugin with several devices overrides
        this; the default is one family for every device (``self``)."""
        return self

    def owns(self, arr):
        """Whether ``arr`` is an array of this family."""
        return isinstance(arr, self.array_type)

    def convert(self, arr, source, dtype):
        """``arr`` (of family ``source``) as a new array of this family in ``dtype``."""
        if source is self:
            return self.astype(arr, dtype) if arr.dtype != dtype else self.copy(arr)
        host = source.to_numpy(arr)
        if host.dtype != dtype:
            host = host.astype(dtype)
        return self.from_numpy(host)

    def __repr__(self):
        return f"ArrayFamily({self.name!r})"


def _astype(a, dtype):
    return a.astype(dtype)


def _copy(a):
    return a.copy()


def _reshape(a, shape):
    return a.reshape(shape)


def _add(a, b):
    return a + b


def _iadd(a, b):
    a += b
    return a


def _nbytes(a):
    return a.nbytes


def _owner(a):
    base = getattr(a, "base", None)
    return a if base is None else base


def _host_astype(a, dtype):
    return a.astype(dtype, copy=False) if a.dtype != dtype else a


def _host_add(a, b):
    # numpy turns the sum of two 0-d arrays into a scalar; a gradient stays an array
    return a + b if a.ndim else np.asarray(a + b)


HOST_FAMILY = "cpu"
HOST = ArrayFamily(HOST_FAMILY, array_type=np.ndarray, xp=np, to_numpy=np.array,
                   from_numpy=np.array, astype=_host_astype, add=_host_add,
                   zeros=np.zeros, full=np.full)

_families = {HOST_FAMILY: HOST}


def register_family(fam):
    """Make ``fam`` known to the core (the plugin registry calls this at activation)."""
    if not isinstance(fam, ArrayFamily):
        raise TypeError(f"register_family: expected nnabla.array_family.ArrayFamily; given "
                        f"{type(fam).__name__}")
    _families[fam.name] = fam


def family(name):
    """The registered :class:`ArrayFamily` called ``name``."""
    try:
        return _families[name]
    except KeyError:
        raise ValueError(f"array family {name!r} is not registered (known: "
                         f"{sorted(_families)}); activate the backend providing it") from None


def families():
    """Names of the registered families."""
    return sorted(_families)
