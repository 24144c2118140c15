"""Kernels that run the CPU plugin's kernel on host copies of their device arrays.

For functions whose generic code is host-bound (grids and per-sample random rectangles
built with numpy, device arrays converted to numpy). Each call copies its
inputs to the host and its results back: correct, and counted as host-staged by
``python -m nnabla_ext.cuda.check``, but not a device implementation. A function moves off
this list when it gets a device kernel.
"""
from __future__ import annotations

import numpy as np
from nnabla.kernel import Kernel
from nnabla_ext.cpu.kernels import GENERIC

# Functions whose generic kernel is not device-clean under the strict emulation (it mixes
# host numpy arrays into device computations, or converts device arrays to numpy).
HOST_STAGED_FUNCTIONS = ("WarpByGrid", "RandomErase", "ImageAugmentation", "ONNXResize")
TRANSFERS = {"to_host": 0, "to_device": 0}     # arrays copied (tests read this)


class HostStaged(Kernel):
    """Runs ``host_class`` (a CPU kernel bound to numpy) on host copies."""

    host_class = None

    def __init__(self, spec, args, in_shapes, out_shapes):
        cls = self.host_class
        host = cls.__new__(cls)
        host.xp = np
        host.storage_dtype = self.storage_dtype
        host.__init__(spec, args, in_shapes, out_shapes)
        self.host = host
        self.spec, self.in_shapes, self.out_shapes = spec, in_shapes, out_shapes
        self.keeps_input_grads = host.keeps_input_grads

    def __getattr__(self, name):
        """State the host kernel keeps for the engine, as device arrays."""
        if "host" not in self.__dict__:
            raise AttributeError(name)
        value = getattr(self.__dict__["host"], name)
        return self._to_device(value) if isinstance(value, np.ndarray) else value

    def _to_host(self, arrays):
        out = []
        for a in arrays:
            if a is not None and not isinstance(a, np.ndarray):
                TRANSFERS["to_host"] += 1
                a = self.xp.asnumpy(a)
            out.append(a)
        return out

    def _to_device(self, a):
        if a is None:
            return None
        TRANSFERS["to_device"] += 1
        return self.xp.asarray(np.asarray(a))

    def _write_back(self, xs, host_xs):
        for i, inp in enumerate(self.spec.inputs):
            if inp.name in self.spec.mutates and i < len(xs) and xs[i] is not None:
                xs[i][...] = self._to_device(host_xs[i])

    def forward(self, xs):
        host_xs = self._to_host(xs)
        ys = self.host.forward(host_xs)
        self._write_back(xs, host_xs)
        return [self._to_device(y) for y in ys]

    def recompute(self, xs):
        host_xs = self._to_host(xs)
        return [self._to_device(y) for y in self.host.recompute(host_xs)]

    def backward(self, xs, ys, dys, propagate_down):
        grads = self.host.backward(self._to_host(xs), self._to_host(ys), self._to_host(dys),
                                   propagate_down)
        return [self._to_device(g) for g in grads]


def host_staged(name, cls):
    """A :class:`HostStaged` kernel class running ``cls`` (the CPU kernel of ``name``)."""
    return type(name, (HostStaged,), {"host_class": cls, "shareable": cls.shareable,
                                      "accepts": cls.accepts, "__module__": __name__})


KERNELS = {name: host_staged(name, GENERIC[name]) for name in HOST_STAGED_FUNCTIONS}
