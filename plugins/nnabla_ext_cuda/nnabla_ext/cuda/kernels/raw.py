"""Kernels written in CUDA C++ (``kernels/cuda/*.cu``), launched through ``RawModule``.

Each source is compiled once per process (CuPy caches the binary on disk too); every
launch passes numpy scalars of the exact C parameter types. On the emulation the same
sources are compiled for the host and run serially (:mod:`nnabla_ext.cuda._host_cuda`).
``python -m nnabla_ext.cuda.check`` compiles every source with NVRTC for the target
architectures, without a device.
"""
from __future__ import annotations

import math
import os
import threading

import numpy as np
from nnabla_ext.cpu.kernels import GENERIC

SOURCE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda")
THREADS = 256
MAX_BLOCKS = 65535
COMPILE_OPTIONS = ("-std=c++17",)


def sources():
    """``{source name: CUDA C++ text}`` of every raw kernel source of the plugin."""
    out = {}
    for name in sorted(os.listdir(SOURCE_DIR)):
        if name.endswith(".cu"):
            with open(os.path.join(SOURCE_DIR, name)) as f:
                out[name[:-3]] = f.read()
    return out


_modules = {}
_lock = threading.Lock()


def module(xp, source):
    """The compiled ``RawModule`` of ``source`` for ``xp``'s CuPy (built once)."""
    key = (id(xp.cupy), source)
    found = _modules.get(key)
    if found is None:
        with _lock:
            found = _modules.get(key)
            if found is None:
                found = xp.cupy.RawModule(code=sources()[source], options=COMPILE_OPTIONS)
                _modules[key] = found
    return found


def launch(xp, source, kernel, n, args):
    """Run ``kernel`` of ``source`` with enough threads for ``n`` items (grid-stride)."""
    if n == 0:
        return
    blocks = min(max(1, math.ceil(n / THREADS)), MAX_BLOCKS)
    module(xp, source).get_function(kernel)((blocks,), (THREADS,), args)


def _i32(v):
    return np.int32(v)


class MaxPooling(GENERIC["MaxPooling"]):
    """Max pooling over two spatial axes by a CUDA kernel (others: the generic code)."""

    def uses_raw(self, x):
        return len(self.geo.kernel) == 2 and x.dtype == np.float32

    def _geometry(self):
        g = self.geo
        return [_i32(v) for v in (g.in_shape[0], g.in_shape[1], g.inner, g.out_shape[0],
                                  g.out_shape[1])]

    def max_forward(self, x):
        if not self.uses_raw(x):
            return super().max_forward(x)
        xp, g = self.xp, self.geo
        x = xp.ascontiguousarray(x)
        n = g.outer * g.out_shape[0] * g.out_shape[1] * g.inner
        y = xp.empty(n, dtype=xp.float32)
        arg = xp.empty(n, dtype=xp.int64)
        h, w, trail, oh, ow = self._geometry()
        launch(xp, "max_pooling_2d", "max_pooling_2d_forward", n,
               (x, y, arg, np.int64(n), h, w, trail, oh, ow, *map(_i32, g.kernel),
                *map(_i32, g.stride), *map(_i32, g.pad)))
        return y, arg

    def max_backward(self, dy, state):
        if state.ndim != 1:        # argmax of the generic path
            return super().max_backward(dy, state)
        xp, g = self.xp, self.geo
        dy = xp.ascontiguousarray(dy.astype(xp.float32, copy=False)).reshape(-1)
        dx = xp.zeros(math.prod(g.x_view), dtype=xp.float32)
        h, w, trail, oh, ow = self._geometry()
        launch(xp, "max_pooling_2d", "max_pooling_2d_backward", dy.size,
               (dy, state, dx, np.int64(dy.size), h, w, trail, oh, ow, _i32(g.kernel[1]),
                *map(_i32, g.stride), *map(_i32, g.pad)))
        return dx


class Embed(GENERIC["Embed"]):
    """Embedding; the weight gradient is a CUDA scatter-add of the output gradient's rows."""

    def backward(self, xs, ys, dys, propagate_down):
        if not propagate_down[1]:
            return [None, None]
        xp, w = self.xp, self.in_shapes[1]
        width = math.prod(w[1:])
        index = xp.ascontiguousarray(xs[0].astype(xp.int64, copy=False)).reshape(-1)
        rows = xp.ascontiguousarray(dys[0].astype(xp.float32, copy=False)).reshape(-1)
        dw = xp.zeros(w[0] * width, dtype=xp.float32)
        launch(xp, "scatter_add_rows", "scatter_add_rows", rows.size,
               (rows, index, dw, np.int64(index.size), np.int64(width), np.int64(w[0])))
        return [None, dw.reshape(w)]


KERNELS = {"MaxPooling": MaxPooling, "Embed": Embed}
