"""The toy backend's kernels: a few functions on ToyArrays."""
from __future__ import annotations

import numpy as np
from nnabla.kernel import Kernel

from . import CALLS, ToyArray


class _ToyKernel(Kernel):
    pass


class AddScalar(_ToyKernel):
    def forward(self, xs):
        CALLS.append("AddScalar")
        return (ToyArray(xs[0].value + self.val),)

    def backward(self, xs, ys, dys, pd):
        return [ToyArray(dys[0].value)]


class ReLU(_ToyKernel):
    def forward(self, xs):
        CALLS.append("ReLU")
        x = xs[0].value
        return (ToyArray(np.where(x > 0, x, 0).astype(x.dtype)),)   # NaN -> 0, as nnabla

    def backward(self, xs, ys, dys, pd):
        return [ToyArray(dys[0].value * (ys[0].value > 0))]


class MulScalar(_ToyKernel):
    @classmethod
    def accepts(cls, args):
        return "val must be positive on the toy device" if args["val"] <= 0 else None

    def forward(self, xs):
        CALLS.append("MulScalar")
        return (ToyArray(xs[0].value * self.val),)

    def backward(self, xs, ys, dys, pd):
        return [ToyArray(dys[0].value * self.val)]


TOY_KERNELS = {"AddScalar": AddScalar, "ReLU": ReLU, "MulScalar": MulScalar}
