"""Cases of the validation functions (no gradients)."""
import numpy as np
from .case import Case, Fixed, Int, Normal, Uniform


def _top_n(x, t, axis=None, n=1):
    axis = x.ndim - 1 if axis is None else axis % x.ndim
    xm = np.moveaxis(x, axis, -1)
    tm = np.moveaxis(t, axis, -1)
    rank = np.argsort(np.argsort(-xm, axis=-1, kind="stable"), axis=-1)
    label_rank = np.take_along_axis(rank, tm, -1)
    return np.moveaxis((label_rank >= n).astype(np.float64), -1, axis)


def _confusion(x, t, axis=None):
    axis = x.ndim - 1 if axis is None else axis % x.ndim
    c = x.shape[axis]
    pred = np.moveaxis(x, axis, -1).argmax(-1).ravel()
    true = np.moveaxis(t, axis, -1).ravel()
    out = np.zeros((c, c), np.int64)
    for i, j in zip(true, pred):
        out[i, j] += 1
    return out


S = (4, 5, 3)

CASES = [
    Case("TopNError", [Normal((6, 5)), Int((6, 1), 0, 5)], ref=_top_n, grad=False),
    Case("TopNError", [Normal(S), Int((4, 1, 3), 0, 5)], {"axis": 1, "n": 3}, ref=_top_n,
         grad=False, id="axis1-n3"),
    Case("TopNError", [Normal(S), Int((4, 5, 1), 0, 3)], {"axis": -1, "n": 2}, ref=_top_n,
         grad=False, id="last-n2"),
    Case("BinaryError", [Uniform(S, 0, 1), Uniform(S, 0, 1)],
         ref=lambda x, t: ((x >= 0.5) != (t >= 0.5)).astype(np.float64), grad=False),
    Case("ConfusionMatrix", [Normal((20, 4)), Int((20, 1), 0, 4)], ref=_confusion, grad=False),
    Case("ConfusionMatrix", [Normal(S), Int((4, 1, 3), 0, 5)], {"axis": 1}, ref=_confusion,
         grad=False, id="axis1"),
    Case("ConfusionMatrix", [Fixed(np.zeros((3, 2))), Fixed(np.array([[1], [0], [1]]))],
         ref=lambda x, t: np.array([[1, 0], [2, 0]]), grad=False, id="ties-pick-first"),
]
