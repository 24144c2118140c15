"""Kernels of the validation functions (forward only), written against ``xp``."""
from __future__ import annotations

from ._base import Kernel
from .loss import check_labels


class TopNError(Kernel):
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        check_labels(self, t, x.shape[self.axis], allow_negative=False)
        score = xp.take_along_axis(x, t, axis=self.axis)
        rank = (x >= score).sum(axis=self.axis, keepdims=True)   # ties count against
        return ((rank > self.n).astype(x.dtype),)


class BinaryError(Kernel):
    def forward(self, xs):
        x, t = xs
        return (((x >= 0.5) != (t >= 0.5)).astype(x.dtype),)


class ConfusionMatrix(Kernel):
    def forward(self, xs):
        x, t = xs
        xp = self.xp
        n_classes = x.shape[self.axis]
        check_labels(self, t, n_classes, allow_negative=False)
        predicted = xp.expand_dims(xp.argmax(x, axis=self.axis), self.axis)
        cells = (t * n_classes + predicted).reshape(-1)
        counts = xp.bincount(cells, minlength=n_classes * n_classes)
        return (counts.reshape(n_classes, n_classes),)


KERNELS = {k.__name__: k for k in (TopNError, BinaryError, ConfusionMatrix)}
