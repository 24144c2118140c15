"""The array namespace CUDA kernels get as ``self.xp``: CuPy plus the numpy API it lacks.

The CPU plugin's generic kernels are written against numpy's API. CuPy follows it closely
but has no ``errstate`` (a GPU raises no floating-point exceptions, so ignoring them is what
a device computation does anyway). Everything else is CuPy's own object, looked up once.
"""
from __future__ import annotations

import contextlib
import types


@contextlib.contextmanager
def errstate(**kwargs):
    """numpy's ``errstate`` on a device: floating-point errors never raise there."""
    yield


class DeviceNamespace(types.ModuleType):
    """``cupy`` (or the emulation's namespace) with :data:`ADDED` on top."""

    ADDED = {"errstate": errstate}

    def __init__(self, cupy):
        super().__init__(f"nnabla_ext.cuda.xp[{cupy.__name__}]")
        self.__dict__.update(self.ADDED)
        self.cupy = cupy
        self.ndarray = cupy.ndarray

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self.cupy, name)
        setattr(self, name, value)       # memoised: a second lookup is a plain attribute
        return value

    def __repr__(self):
        return f"<CUDA array namespace over {self.cupy.__name__} {self.cupy.__version__}>"
