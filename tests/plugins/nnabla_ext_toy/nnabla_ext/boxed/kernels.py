"""The boxed backend's kernels: every CPU kernel, run on the values inside the boxes.

Each boxed kernel owns a CPU kernel instance (bound to numpy) and unboxes its inputs,
runs it and boxes the results, returning the very Box it was given when the CPU kernel
returns one of its inputs (so the engine sees aliasing as it would on a device).
"""
from __future__ import annotations

import numpy as np
from nnabla.kernel import Kernel
from nnabla_ext.cpu.kernels import CPU_KERNELS

from . import Box

CALLS = []      # names of the boxed kernels that ran (tests read this)


def _unbox(arrays, boxes):
    out = []
    for a in arrays:
        if isinstance(a, Box):
            boxes[id(a.value)] = a
            out.append(a.value)
        else:
            out.append(a)
    return out


def _box(values, boxes):
    return [None if v is None else boxes.get(id(v)) or Box(np.asarray(v)) for v in values]


class BoxedKernel(Kernel):
    """Runs ``host_class`` (a CPU kernel) on boxed arrays."""

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
        """State the host kernel keeps for the core (dropout's mask), boxed."""
        if "host" not in self.__dict__:
            raise AttributeError(name)
        value = getattr(self.__dict__["host"], name)
        return Box(value) if isinstance(value, np.ndarray) else value

    def forward(self, xs):
        CALLS.append(self.spec.name)
        boxes = {}
        return _box(self.host.forward(_unbox(xs, boxes)), boxes)

    def recompute(self, xs):
        boxes = {}
        return _box(self.host.recompute(_unbox(xs, boxes)), boxes)

    def backward(self, xs, ys, dys, propagate_down):
        boxes = {}
        grads = self.host.backward(_unbox(xs, boxes), _unbox(ys, boxes), _unbox(dys, boxes),
                                   propagate_down)
        return _box(grads, boxes)


def _boxed(name, cls):
    return type(f"Boxed{name}", (BoxedKernel,),
                {"host_class": cls, "shareable": cls.shareable, "accepts": cls.accepts})


BOXED_KERNELS = {name: _boxed(name, cls) for name, cls in CPU_KERNELS.items()}
