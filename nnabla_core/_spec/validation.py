"""Validation functions: classification errors and the confusion matrix.

None of them is differentiable. Their label inputs follow the cross-entropy
rule: ``target`` has x's shape with size 1 along ``axis`` (see :mod:`.loss`).
"""
from __future__ import annotations

from .base import Arg, FunctionSpec, Input, Needs, Output
from .loss import AXIS, equal_shapes, label_along_axis, resolve_axis

CATEGORY = "Validation"
LABELED = (Input("x"), Input("target", integer=True))


def confusion_matrix(spec, x, target, *, axis):
    label_along_axis(spec, x, target, axis=axis)
    return ((x[axis], x[axis]),)


def top_n_error(spec, x, target, *, axis, n):
    if n < 1:
        raise spec.value_error("n", "a positive int", n)
    return label_along_axis(spec, x, target, axis=axis)


SPECS = [
    FunctionSpec(
        "TopNError", "top_n_error", CATEGORY, LABELED, (AXIS, Arg("n", "int", 1)),
        (Output("output"),), top_n_error, Needs(), differentiable=False,
        resolve_args=resolve_axis,
        doc="Top-n error per sample: 1 if the label's score is not among the n largest "
            "along `axis` (ties count against it), else 0. The output has target's shape."),
    FunctionSpec(
        "BinaryError", "binary_error", CATEGORY, (Input("x"), Input("target")), (),
        (Output("output"),), equal_shapes, Needs(), differentiable=False,
        doc="Element-wise binary error: 1 where (x >= 0.5) != (target >= 0.5), else 0."),
    FunctionSpec(
        "ConfusionMatrix", "confusion_matrix", CATEGORY, LABELED, (AXIS,),
        (Output("output", dtype="int32"),), confusion_matrix, Needs(), differentiable=False,
        resolve_args=resolve_axis,
        doc="Confusion matrix of integer counts, shape (C, C) with C = x.shape[axis]: "
            "entry [i, j] counts samples of label i whose arg-max along `axis` is j."),
]
