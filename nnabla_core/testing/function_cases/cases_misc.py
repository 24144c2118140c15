"""Cases of the special-use functions, generators and integer element-wise functions."""
import numpy as np
from .case import Case, Fixed, Normal, Uniform


def _iou(a, b):
    w = min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2)
    h = min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2)
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / (a[2] * a[3] + b[2] * b[3] - w * h)


def _nms2d(x, thresh=0.5, nms=0.45, nms_per_class=True):
    y = x.copy()
    y[..., 4] = np.where(x[..., 4] < thresh, 0, x[..., 4])
    p = y[..., 4:5] * x[..., 5:]
    y[..., 5:] = np.where(p < thresh, 0, p)
    for b in range(y.shape[0]):
        cols = range(5, y.shape[2]) if nms_per_class else [4]
        for c in cols:
            order = sorted(range(y.shape[1]), key=lambda i: -y[b, i, c])
            for n, i in enumerate(order):
                if nms_per_class:
                    for j in order[n + 1:]:
                        if y[b, i, c] and y[b, j, c] and _iou(y[b, i], y[b, j]) > nms:
                            y[b, j, c] = 0
                elif y[b, i, 4] and any(_iou(y[b, i], y[b, j]) > nms for j in order[:n]):
                    y[b, i, 4:] = 0
    return y


def _onnx_nms(boxes, scores, center_point_box=0, max_output_boxes_per_class=0,
              iou_threshold=0.0, score_threshold=0.0):
    out = []
    for b in range(boxes.shape[0]):
        bx = boxes[b]
        if center_point_box:
            lo, hi = bx[:, :2] - bx[:, 2:] / 2, bx[:, :2] + bx[:, 2:] / 2
        else:
            lo, hi = np.minimum(bx[:, :2], bx[:, 2:]), np.maximum(bx[:, :2], bx[:, 2:])
        area = np.prod(hi - lo, axis=1)
        for c in range(scores.shape[1]):
            s = scores[b, c]
            kept = []
            for i in sorted(np.flatnonzero(s > score_threshold), key=lambda i: -s[i]):
                if len(kept) >= max_output_boxes_per_class:
                    break
                inter = [np.prod(np.clip(np.minimum(hi[i], hi[k]) - np.maximum(lo[i], lo[k]),
                                         0, None)) for k in kept]
                if all(t / (area[i] + area[k] - t) <= iou_threshold
                       for t, k in zip(inter, kept)):
                    kept.append(i)
            out += [(b, c, k) for k in kept]
    return np.array(out, dtype=np.uint64).reshape(-1, 3)


def _vat(x, w, base_axis=1, eps=1.0):
    r = x.reshape(int(np.prod(x.shape[:base_axis])), -1)
    return (eps * r / np.sqrt((r ** 2).sum(1, keepdims=True) + 1e-8)).reshape(x.shape)


def _detections(shape):
    rng = np.random.RandomState(3)
    x = rng.rand(*shape)
    x[..., :2] *= 0.5
    x[..., 2:4] = x[..., 2:4] * 0.4 + 0.1
    return Fixed(x)


S = (2, 3, 4)

CASES = [
    Case("NmsDetection2d", [_detections((2, 6, 7))], ref=_nms2d, grad=False),
    Case("NmsDetection2d", [_detections((2, 6, 7))], {"nms_per_class": False},
         ref=_nms2d, grad=False, id="objectness"),
    Case("NmsDetection2d", [_detections((1, 8, 6))], {"thresh": 0.2, "nms": 0.2},
         ref=_nms2d, grad=False, id="low-thresholds"),
    Case("ONNXNonMaxSuppression", [Uniform((2, 6, 4), 0, 1), Uniform((2, 3, 6), 0, 1)],
         {"max_output_boxes_per_class": 3, "iou_threshold": 0.2, "score_threshold": 0.3},
         ref=_onnx_nms, grad=False),
    Case("ONNXNonMaxSuppression", [Uniform((2, 6, 4), 0, 1), Uniform((2, 3, 6), 0, 1)],
         {"center_point_box": 1, "max_output_boxes_per_class": 10, "iou_threshold": 0.5},
         ref=_onnx_nms, grad=False, id="center-boxes"),
    Case("ONNXNonMaxSuppression", [Uniform((1, 4, 4), 0, 1), Uniform((1, 2, 4), 0, 1)],
         ref=_onnx_nms, grad=False, id="no-output"),
    Case("VATNoise", [Normal((3, 4, 5)), Fixed(np.zeros((3, 4, 5)))], {"base_axis": 2,
                                                                       "eps": 1.4},
         ref=_vat, grad=False),
    Case("VATNoise", [Normal((3, 6)), Fixed(np.zeros((3, 6)))], {"base_axis": -1},
         ref=_vat, grad=False, id="negative-axis"),
    Case("Unlink", [Normal(S)], ref=lambda x: x, grad=False),
    Case("Sink", [[Normal(S), Normal((3,))]], ref=lambda xs, **kw: np.zeros(()),
         grad=False, check_outputs=()),
    Case("Constant", [], {"val": 1.5, "shape": (2, 3)}, ref=lambda **kw: np.full((2, 3), 1.5),
         grad=False),
    Case("Constant", [], {"val": -2.0}, ref=lambda **kw: np.full((), -2.0), grad=False,
         id="scalar"),
    Case("Arange", [], {"start": -9.9, "stop": 9.9, "step": 1.1},
         ref=lambda **a: np.arange(-9.9, 9.9, 1.1), grad=False),
    Case("Arange", [], {"start": 10, "stop": 0, "step": -0.3},
         ref=lambda **a: np.arange(10, 0, -0.3), grad=False, id="negative-step"),
    Case("Arange", [], {"start": 0, "stop": 10, "step": -1},
         ref=lambda **a: np.arange(0, 10, -1), grad=False, id="empty"),
    Case("Linspace", [], {"start": -50, "stop": 50, "num": 23},
         ref=lambda **a: np.linspace(-50, 50, 23), grad=False),
    Case("Linspace", [], {"start": 2, "stop": 1, "num": 1},
         ref=lambda **a: np.array([2.0]), grad=False, id="one"),
    Case("EyeLike", [Normal((3, 5))], {"k": 1}, ref=lambda x, k: np.eye(3, 5, k), grad=False),
    Case("EyeLike", [Normal((5, 3))], {"k": -2}, ref=lambda x, k: np.eye(5, 3, k), grad=False,
         id="below"),
    Case("BcAdd2", [Normal((2, 1, 4)), Normal((1, 3, 4))], ref=lambda a, b, **kw: a + b),
    Case("Mod2", [Normal(S, 3), Uniform(S, 0.5, 2)], ref=lambda a, b, **kw: np.fmod(a, b),
         grad=False),
    Case("Mod2", [Normal(S, 3), Uniform((1, 1, 1), -2, -0.5)], {"fmod": True},
         ref=lambda a, b, **kw: np.fmod(a, b), grad=False, id="fmod-broadcast"),
    Case("BitShift", [Fixed(np.arange(24).reshape(S)), Fixed(np.array([[[0, 1, 2, 70]]]))],
         ref=lambda x, s, **kw: np.where(s < 64, x << np.minimum(s, 63), 0), grad=False),
    Case("BitShift", [Fixed(np.arange(24).reshape(S) * 37), Fixed(np.array([[[1]], [[3]]]))],
         {"direction": "RIGHT"}, ref=lambda x, s, **kw: x >> s, grad=False, id="right"),
]
