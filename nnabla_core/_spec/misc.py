"""Special-use functions: detection post-processing, VAT noise, graph helpers (unlink,
sink), generators without inputs (constant, arange, linspace), eye_like and the integer
element-wise functions (mod2, bit_shift), plus bc_add2.
"""
from __future__ import annotations

import math

from . import shapes
from .args import check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Unsupported, Special Use"
Y = (Output("y"),)
X = (Input("x"),)


# ------------------------------------------------------------- shape rules
def nms_detection2d(spec, x, **args):
    if len(x) != 3 or x[2] <= 5:
        raise spec.shape_error("x", "(batch, boxes, 5 + classes) with at least one class", x,
                               why="each box is x, y, w, h, objectness, class scores")
    return (tuple(x),)


def onnx_nms(spec, boxes, scores, *, center_point_box, max_output_boxes_per_class,
             iou_threshold, score_threshold):
    if len(boxes) != 3 or boxes[2] != 4:
        raise spec.shape_error("boxes", "(batch, boxes, 4)", boxes)
    if len(scores) != 3 or scores[0] != boxes[0] or scores[2] != boxes[1]:
        raise spec.shape_error("scores", f"({boxes[0]}, classes, {boxes[1]})", scores,
                               why="one score per class for each box of boxes")
    if center_point_box not in (0, 1):
        raise spec.value_error("center_point_box", "0 (corners) or 1 (center, size)",
                               center_point_box)
    if max_output_boxes_per_class < 0:
        raise spec.value_error("max_output_boxes_per_class", "a non-negative int",
                               max_output_boxes_per_class)
    return ((0, 3),)          # the number of selected boxes depends on the data


def resolve_base_axis(spec, in_shapes, args):
    ndim = len(in_shapes[0])
    base_axis = check_axis(spec, "base_axis", args["base_axis"], ndim)
    if base_axis == 0:
        raise spec.value_error("base_axis", f"an axis in [1, {ndim})", args["base_axis"],
                               why="the axes before base_axis index the samples")
    return {**args, "base_axis": base_axis}


def vat_noise(spec, x, w, *, base_axis, eps):
    if tuple(w) != tuple(x):
        raise spec.shape_error("w", f"x's shape {tuple(x)}", w)
    return (tuple(x),)


def sink(spec, *xs, one_input_grad):
    if not xs:
        raise spec.value_error("x", "at least one input", 0)
    return ((),)


def constant(spec, *, val, shape):
    if any(s < 0 for s in shape):
        raise spec.value_error("shape", "non-negative sizes", tuple(shape))
    return (tuple(shape),)


def arange_size(start, stop, step):
    return max(0, math.ceil((stop - start) / step))


def arange(spec, *, start, stop, step):
    if step == 0:
        raise spec.value_error("step", "a non-zero step", step)
    return ((arange_size(start, stop, step),),)


def linspace(spec, *, start, stop, num):
    if num < 0:
        raise spec.value_error("num", "a non-negative number of samples", num)
    return ((num,),)


def eye_like(spec, x, *, k):
    if len(x) != 2:
        raise spec.shape_error("x", "2 dimensions (rows, columns)", x)
    return (tuple(x),)


def bit_shift(spec, x, shift, *, direction):
    return shapes.broadcast2(spec, x, shift)


SPECS = [
    FunctionSpec("NmsDetection2d", "nms_detection2d", CATEGORY, X,
                 (Arg("thresh", "float", 0.5), Arg("nms", "float", 0.45),
                  Arg("nms_per_class", "bool", True)), Y, nms_detection2d, Needs(),
                 differentiable=False,
                 doc="Non-maximum suppression of YOLO-style detections (B, N, 5 + C): class "
                     "scores become objectness * probability, those below `thresh` and "
                     "boxes overlapping a better one by IoU > `nms` are zeroed."),
    FunctionSpec("ONNXNonMaxSuppression", "onnx_non_max_suppression", CATEGORY,
                 (Input("boxes"), Input("scores")),
                 (Arg("center_point_box", "int", 0), Arg("max_output_boxes_per_class", "int", 0),
                  Arg("iou_threshold", "float", 0.0), Arg("score_threshold", "float", 0.0)),
                 (Output("y", dtype="uint64"),), onnx_nms, Needs(), differentiable=False,
                 dynamic_shape=True,
                 doc="ONNX NonMaxSuppression: (M, 3) indices (batch, class, box) of the "
                     "selected boxes, per batch and class in decreasing score order."),
    FunctionSpec("VATNoise", "vat_noise", CATEGORY, (Input("x"), Input("w")),
                 (Arg("base_axis", "int", 1), Arg("eps", "float", 1.0)), Y, vat_noise,
                 Needs(inputs=("w",)), resolve_args=resolve_base_axis, backward_mutates=("w",),
                 doc="y = eps * x / ||x|| per sample (axes from base_axis on). Backward "
                     "writes eps * dy into w's data and gives no gradient, as nnabla."),
    FunctionSpec("Unlink", "unlink", CATEGORY, X, (), Y, shapes.same, Needs(),
                 differentiable=False, doc="y = x, cut from the graph: no gradient flows."),
    FunctionSpec("Sink", "sink", CATEGORY, (Input("x", variadic=True),),
                 (Arg("one_input_grad", "bool", True),), Y, sink, Needs(), keeps_inputs=True,
                 doc="A 0-d dummy output joining several variables so that one forward or "
                     "backward call runs them all; with `one_input_grad` every input's "
                     "gradient is 1."),
    FunctionSpec("Constant", "constant", "Math", (),
                 (Arg("val", "float", 0), Arg("shape", "ints", [])), Y, constant, Needs(),
                 differentiable=False, doc="An array of `shape` filled with `val`."),
    FunctionSpec("Arange", "arange", "Math", (),
                 (Arg("start", "float"), Arg("stop", "float"), Arg("step", "float", 1)), Y,
                 arange, Needs(), differentiable=False,
                 doc="Values start, start + step, ... up to (not including) stop."),
    FunctionSpec("Linspace", "linspace", "Math", (),
                 (Arg("start", "float"), Arg("stop", "float"), Arg("num", "int")), Y,
                 linspace, Needs(), differentiable=False,
                 doc="`num` evenly spaced values from start to stop, both included."),
    FunctionSpec("EyeLike", "eye_like", CATEGORY, X, (Arg("k", "int", 0),), Y, eye_like,
                 Needs(), differentiable=False,
                 doc="A 2-D array of x's shape with ones on diagonal `k`, zeros elsewhere."),
    FunctionSpec("BcAdd2", "bc_add2", "Arithmetic", (Input("x0"), Input("x1")),
                 (Arg("inplace", "bool", False),), Y, shapes.broadcast2, Needs(),
                 doc="Element-wise addition with broadcasting: y = x0 + x1."),
    FunctionSpec("Mod2", "mod2", CATEGORY,
                 (Input("x0", stored_dtype=True), Input("x1", stored_dtype=True)),
                 (Arg("fmod", "bool", False),), Y, shapes.broadcast2, Needs(),
                 differentiable=False,
                 doc="Element-wise remainder: C's fmod (sign of x0) for float data; for "
                     "integer data the floored modulo (sign of x1) unless `fmod`."),
    FunctionSpec("BitShift", "bit_shift", CATEGORY,
                 (Input("x", stored_dtype=True), Input("shift", stored_dtype=True)),
                 (Arg("direction", "str", "LEFT", choices=("LEFT", "RIGHT")),), Y, bit_shift,
                 Needs(), differentiable=False,
                 doc="Element-wise x << shift (LEFT) or x >> shift (RIGHT) of integers; "
                     "shifts outside [0, bits) give 0."),
]
