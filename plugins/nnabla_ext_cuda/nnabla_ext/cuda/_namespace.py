"""The array namespace CUDA kernels get as ``self.xp``: CuPy plus the numpy API it lacks.

The CPU plugin's generic kernels are written against numpy's API. CuPy follows it closely
but has no ``errstate`` (a GPU raises no floating-point exceptions, so ignoring them is what
a device computation does anyway). Everything else is CuPy's own object, looked up once.
"""
from __future__ import annotations

import contextlib
import functools
import types


@contextlib.contextmanager
def errstate(**kwargs):
    """numpy's ``errstate`` on a device: floating-point errors never raise there."""
    yield


class DeviceNamespace(types.ModuleType):
    """``cupy`` (or the emulation's namespace) with :data:`ADDED` on top, for the arrays of
    one device (``device_index``): kernels and solver rules given this namespace run with
    that device current (:func:`call_on_device`)."""

    ADDED = {"errstate": errstate}

    def __init__(self, cupy, device_index=0):
        super().__init__(f"nnabla_ext.cuda.xp[{cupy.__name__}, device {device_index}]")
        self.__dict__.update(self.ADDED)
        self.cupy = cupy
        self.ndarray = cupy.ndarray
        self.device_index = device_index
        self.current_device = cupy.cuda.runtime.getDevice

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self.cupy, name)
        setattr(self, name, value)       # memoised: a second lookup is a plain attribute
        return value

    def __repr__(self):
        return (f"<CUDA array namespace over {self.cupy.__name__} {self.cupy.__version__}, "
                f"device {self.device_index}>")


def call_on_device(xp, function, *args):
    """``function(*args)`` with ``xp``'s device current: ``cupy.cuda.Device`` is entered
    only when another device is current (one ``cudaGetDevice`` otherwise). A namespace
    without a device (a test's plain numpy) just calls."""
    index = getattr(xp, "device_index", None)
    if index is None or xp.current_device() == index:
        return function(*args)
    with xp.cupy.cuda.Device(index):
        return function(*args)


def on_device(cls):
    """A subclass of kernel class ``cls`` whose ``setup``, ``forward``, ``backward`` and
    ``recompute`` run on its ``xp``'s device (:func:`call_on_device`), as does the function
    of a ``forward_ufunc`` its setup declares; same name, so messages and reports read as
    ``cls``'s. ``on_device(cls).base is cls``."""
    attrs = {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
             "__doc__": cls.__doc__, "base": cls}
    for name in ("forward", "backward", "recompute"):
        attrs[name] = _switching(getattr(cls, name))
    attrs["setup"] = _switching_setup(cls.setup)
    return type(cls.__name__, (cls,), attrs)


def _switching_setup(setup):
    @functools.wraps(setup)
    def run(self):
        call_on_device(self.xp, setup, self)
        declared = self.forward_ufunc
        if isinstance(declared, tuple) and declared and callable(declared[0]):
            self.forward_ufunc = (functools.partial(call_on_device, self.xp, declared[0]),
                                  *declared[1:])
    return run


def _switching(method):
    @functools.wraps(method)
    def run(self, *args):
        return call_on_device(self.xp, method, self, *args)
    return run
