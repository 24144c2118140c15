"""Kernels of the special-use functions, generators and integer element-wise functions."""
from __future__ import annotations

import math

from ._base import Kernel, unbroadcast


class _NoGradient(Kernel):
    """nnabla's backward of these functions leaves the input gradients untouched."""

    def backward(self, xs, ys, dys, propagate_down):
        return [None] * len(xs)


# --------------------------------------------------------------- detection
def _iou_center(xp, box, boxes):
    """IoU of one (x, y, w, h) box against many, 0 where they do not overlap."""
    w = (xp.minimum(box[0] + box[2] / 2, boxes[:, 0] + boxes[:, 2] / 2)
         - xp.maximum(box[0] - box[2] / 2, boxes[:, 0] - boxes[:, 2] / 2))
    h = (xp.minimum(box[1] + box[3] / 2, boxes[:, 1] + boxes[:, 3] / 2)
         - xp.maximum(box[1] - box[3] / 2, boxes[:, 1] - boxes[:, 3] / 2))
    inter = w * h
    union = box[2] * box[3] + boxes[:, 2] * boxes[:, 3] - inter
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where((w > 0) & (h > 0), inter / union, 0.0)


class NmsDetection2d(_NoGradient):
    def forward(self, xs):
        xp = self.xp
        y = xs[0].copy()
        obj = xp.where(y[..., 4] < self.thresh, 0.0, y[..., 4])
        y[..., 4] = obj
        probs = obj[..., None] * y[..., 5:]
        y[..., 5:] = xp.where(probs < self.thresh, 0.0, probs)
        for b in range(y.shape[0]):
            if self.nms_per_class:
                for k in range(5, y.shape[2]):
                    self._suppress(y[b], k, ascending=False)
            else:
                self._suppress(y[b], 4, ascending=True)
        return (y,)

    def _suppress(self, rows, col, ascending):
        """Greedy NMS on ``rows[:, col]`` (the score, modified in place)."""
        xp = self.xp
        order = xp.argsort(-rows[:, col], kind="stable")
        if ascending:
            # nnabla's objectness mode walks from the best box and compares it with every
            # better one, suppressing the box itself (all its scores) on overlap.
            for i in range(len(order) - 1, -1, -1):
                box = rows[order[i]]
                if box[4] == 0 or i == 0:
                    continue
                if (_iou_center(xp, box[:4], rows[order[:i], :4]) > self.nms).any():
                    box[4:] = 0
            return
        for i, idx in enumerate(order):
            if rows[idx, col] == 0:
                continue
            rest = order[i + 1:]
            rest = rest[rows[rest, col] != 0]
            over = _iou_center(xp, rows[idx, :4], rows[rest, :4]) > self.nms
            rows[rest[over], col] = 0


def _corners(xp, boxes, center_point_box):
    if center_point_box:
        c, half = boxes[:, :2], boxes[:, 2:] / 2
        return c - half, c + half
    return xp.minimum(boxes[:, :2], boxes[:, 2:]), xp.maximum(boxes[:, :2], boxes[:, 2:])


def _iou_corners(xp, lo, hi, i, rest):
    inter = xp.clip(xp.minimum(hi[i], hi[rest]) - xp.maximum(lo[i], lo[rest]), 0, None)
    inter = inter.prod(axis=-1)
    area = (hi - lo).prod(axis=-1)
    union = area[i] + area[rest] - inter
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where(union > 0, inter / union, 0.0)


class ONNXNonMaxSuppression(Kernel):
    def forward(self, xs):
        boxes, scores = xs
        xp = self.xp
        selected = []
        for b in range(boxes.shape[0]):
            lo, hi = _corners(xp, boxes[b], self.center_point_box)
            for c in range(scores.shape[1]):
                for i in self._select(scores[b, c], lo, hi):
                    selected.append((b, c, i))
        return (xp.asarray(selected, dtype=xp.uint64).reshape(-1, 3),)

    def _select(self, score, lo, hi):
        xp = self.xp
        limit = self.max_output_boxes_per_class
        cand = xp.flatnonzero(score > self.score_threshold)
        cand = cand[xp.argsort(-score[cand], kind="stable")]
        keep = []
        while cand.size and len(keep) < limit:
            i, cand = cand[0], cand[1:]
            keep.append(int(i))
            cand = cand[_iou_corners(xp, lo, hi, i, cand) <= self.iou_threshold]
        return keep


# ---------------------------------------------------------- graph helpers
class VATNoise(Kernel):
    def forward(self, xs):
        x = xs[0]
        xp = self.xp
        rows = x.reshape(-1, math.prod(x.shape[self.base_axis:]))
        norm = xp.sqrt((rows * rows).sum(axis=1, keepdims=True) + 1e-8)
        return ((self.eps / norm * rows).reshape(x.shape),)

    def backward(self, xs, ys, dys, propagate_down):
        # nnabla's VAT trick: the scaled output gradient is stored as w's data.
        xs[1][...] = dys[0] * self.eps
        return [None, None]


class Unlink(_NoGradient):
    def forward(self, xs):
        return (xs[0].copy(),)


class Sink(Kernel):
    def setup(self):
        # one_input_grad=False: the inputs' current gradients are what flows back from them
        self.keeps_input_grads = not self.one_input_grad

    def forward(self, xs):
        return (self.xp.zeros((), dtype=self.xp.float32),)

    def backward(self, xs, ys, dys, propagate_down):
        if not self.one_input_grad:
            return [None] * len(self.in_shapes)
        return [self.xp.ones(s, dtype=self.xp.float32) for s in self.in_shapes]


# -------------------------------------------------------------- generators
class Constant(Kernel):
    def forward(self, xs):
        return (self.xp.full(self.out_shapes[0], self.val, dtype=self.xp.float32),)


class Arange(Kernel):
    def forward(self, xs):
        n = self.out_shapes[0][0]
        xp = self.xp
        return ((self.start + xp.arange(n, dtype=xp.float64) * self.step).astype(xp.float32),)


class Linspace(Kernel):
    def forward(self, xs):
        xp = self.xp
        return (xp.linspace(self.start, self.stop, self.num).astype(xp.float32),)


class EyeLike(_NoGradient):
    def forward(self, xs):
        rows, cols = self.in_shapes[0]
        return (self.xp.eye(rows, cols, k=self.k, dtype=self.xp.float32),)


# --------------------------------------------------------------- element-wise
class BcAdd2(Kernel):
    def forward(self, xs):
        return (xs[0] + xs[1],)

    def backward(self, xs, ys, dys, propagate_down):
        return [unbroadcast(self.xp, dys[0], s) if p else None
                for s, p in zip(self.in_shapes, propagate_down)]


class Mod2(Kernel):
    def forward(self, xs):
        x0, x1 = xs
        xp = self.xp
        integer = x0.dtype.kind in "iu" and x1.dtype.kind in "iu"
        with xp.errstate(divide="ignore", invalid="ignore"):
            if integer and not self.fmod:
                return (xp.mod(x0, x1),)
            return (xp.fmod(x0, x1),)


class BitShift(Kernel):
    def forward(self, xs):
        x, shift = xs
        xp = self.xp
        bits = x.dtype.itemsize * 8
        valid = (shift >= 0) & (shift < bits)
        s = xp.where(valid, shift, 0)
        y = xp.left_shift(x, s) if self.direction == "LEFT" else xp.right_shift(x, s)
        return (xp.where(valid, y, 0).astype(x.dtype),)


KERNELS = {k.__name__: k for k in (
    NmsDetection2d, ONNXNonMaxSuppression, VATNoise, Unlink, Sink, Constant, Arange,
    Linspace, EyeLike, BcAdd2, Mod2, BitShift)}
