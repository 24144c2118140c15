"""``F.*`` special-use functions whose Python signature differs from the function type's:
``None`` defaults (nms) and ``linspace`` without ``n_outputs``/``outputs``."""
from __future__ import annotations

import numbers

from nnabla._dispatch import call_function

__all__ = ["linspace", "nms_detection2d", "onnx_non_max_suppression"]


def nms_detection2d(x, thresh=None, nms=None, nms_per_class=None, n_outputs=-1, outputs=None):
    """Non-maximum suppression of (B, N, 5 + C) detections.

    Args:
        x (~nnabla.Variable): boxes (x, y, w, h), objectness and class probabilities.
        thresh (float): score threshold (None: 0.5).
        nms (float): IoU threshold (None: 0.45).
        nms_per_class (bool): suppress per class (None: True) or by objectness.

    Returns:
        ~nnabla.Variable: x's shape; scores multiplied by objectness, suppressed ones 0.
    """
    return call_function("NmsDetection2d", x, thresh=0.5 if thresh is None else thresh,
                         nms=0.45 if nms is None else nms,
                         nms_per_class=True if nms_per_class is None else nms_per_class,
                         n_outputs=n_outputs, outputs=outputs)


def onnx_non_max_suppression(boxes, scores, center_point_box=None,
                             max_output_boxes_per_class=None, iou_threshold=None,
                             score_threshold=None, n_outputs=-1, outputs=None):
    """ONNX NonMaxSuppression; ``None`` arguments take ONNX's defaults (0).

    Returns:
        ~nnabla.Variable: (M, 3) uint64 indices (batch, class, box) of the selected boxes.
    """
    return call_function(
        "ONNXNonMaxSuppression", boxes, scores,
        center_point_box=0 if center_point_box is None else center_point_box,
        max_output_boxes_per_class=(0 if max_output_boxes_per_class is None
                                    else max_output_boxes_per_class),
        iou_threshold=0.0 if iou_threshold is None else iou_threshold,
        score_threshold=0.0 if score_threshold is None else score_threshold,
        n_outputs=n_outputs, outputs=outputs)


def linspace(start, stop, num):
    """``num`` evenly spaced values from ``start`` to ``stop`` (both included).

    Raises:
        TypeError: ``num`` is not an int.
        ValueError: ``num`` is negative.
    """
    if isinstance(num, bool) or not isinstance(num, numbers.Integral):
        raise TypeError(f"F.linspace: argument 'num' is of type {type(num).__name__} "
                        f"({num!r}); expected int")
    if num < 0:
        raise ValueError(f"F.linspace: argument 'num' is {num!r}; expected a non-negative "
                         "number of samples")
    return call_function("Linspace", start=start, stop=stop, num=num)
