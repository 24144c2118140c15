"""Loss functions: cross-entropies, regression losses and the KL divergence.

Labels (``target`` of the softmax and categorical cross-entropies) are integer
inputs and are not differentiated. Negative labels are ignored (their loss and
gradient are zero), as nnabla does; labels past the class count raise from the
kernel, since their validity depends on the data.
"""
from __future__ import annotations

from . import shapes
from .args import check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Loss Functions"
Y = (Output("y"),)
X0X1 = (Input("x0"), Input("x1"))
AXIS = Arg("axis", "int?", None)


def resolve_axis(spec, in_shapes, args):
    """Fill ``axis=None`` with the last axis of ``x`` and normalise a negative one."""
    ndim = len(in_shapes[0])
    axis = args["axis"]
    axis = ndim - 1 if axis is None else check_axis(spec, "axis", axis, ndim)
    return {**args, "axis": axis}


def label_along_axis(spec, x, target, *, axis, **args):
    """Shape rule of label inputs: ``target`` is ``x`` with size 1 along ``axis``.

    The output has the shape of ``target``.
    """
    if len(x) == 0:
        raise spec.shape_error("x", "at least 1 dimension (the class axis)", x)
    expected = tuple(1 if i == axis else s for i, s in enumerate(x))
    if tuple(target) != expected:
        raise spec.shape_error("target", f"{expected}", target,
                               why=f"the labels have x's shape {tuple(x)} with size 1 "
                                   f"along axis {axis}")
    return (expected,)


def equal_shapes(spec, x0, x1, **args):
    """Two inputs of exactly the same shape (no broadcasting); the output is alike."""
    if tuple(x0) != tuple(x1):
        names = spec.input_names
        raise spec.shape_error(names[1], f"{tuple(x0)} like {names[0]}", x1)
    return (tuple(x0),)


def kl_multinomial(spec, p, q, *, base_axis):
    equal_shapes(spec, p, q)
    if len(p) == 0:
        raise spec.shape_error("p", "at least 1 dimension", p)
    base_axis = check_axis(spec, "base_axis", base_axis, len(p))
    return (tuple(p[:base_axis]) + (1,),)


def _label_loss(name, snake, doc):
    return FunctionSpec(name, snake, CATEGORY,
                        (Input("x"), Input("target", integer=True)), (AXIS,), Y,
                        label_along_axis, Needs(inputs=("x", "target")), doc=doc,
                        resolve_args=resolve_axis)


def _elementwise(name, snake, doc, args=(), shape_rule=shapes.broadcast2, inputs=X0X1,
                 needs=("x0", "x1")):
    return FunctionSpec(name, snake, CATEGORY, inputs, args, Y, shape_rule,
                        Needs(inputs=needs), doc=doc)


SPECS = [
    _label_loss(
        "SoftmaxCrossEntropy", "softmax_cross_entropy",
        "Cross-entropy of softmax(x) along `axis` against integer labels: "
        "y = -log softmax(x)[target]. `target` has x's shape with size 1 along `axis`; "
        "negative labels give 0."),
    _label_loss(
        "CategoricalCrossEntropy", "categorical_cross_entropy",
        "Cross-entropy of probabilities x along `axis` against integer labels: "
        "y = -log x[target]. Negative labels give 0."),
    _elementwise(
        "SigmoidCrossEntropy", "sigmoid_cross_entropy",
        "Element-wise cross-entropy of sigmoid(x) against binary labels t: "
        "y = -(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), computed stably. "
        "The labels are read as integers (as nnabla does) and not differentiated.",
        shape_rule=equal_shapes, inputs=(Input("x"), Input("target", integer=True)),
        needs=("x", "target")),
    _elementwise(
        "BinaryCrossEntropy", "binary_cross_entropy",
        "Element-wise cross-entropy of probabilities x against targets t in [0, 1]: "
        "y = -(t log x + (1 - t) log(1 - x)).",
        shape_rule=equal_shapes, inputs=(Input("x"), Input("target")),
        needs=("x", "target")),
    _elementwise("SquaredError", "squared_error",
                 "Element-wise squared error: y = (x0 - x1)^2."),
    _elementwise("AbsoluteError", "absolute_error",
                 "Element-wise absolute error: y = |x0 - x1|."),
    _elementwise("HuberLoss", "huber_loss",
                 "Element-wise Huber loss with d = |x0 - x1|: y = d^2 if d < delta, "
                 "else delta (2d - delta).",
                 args=(Arg("delta", "float", 1.0),)),
    _elementwise("EpsilonInsensitiveLoss", "epsilon_insensitive_loss",
                 "Element-wise epsilon-insensitive loss: y = max(|x0 - x1| - epsilon, 0).",
                 args=(Arg("epsilon", "float"),)),
    FunctionSpec(
        "KLMultinomial", "kl_multinomial", CATEGORY, (Input("p"), Input("q")),
        (Arg("base_axis", "int", 1),), (Output("D"),), kl_multinomial,
        Needs(inputs=("p", "q")),
        doc="KL divergence of multinomials over the axes from `base_axis` on: "
            "D = sum p (log p - log q); the output has shape p.shape[:base_axis] + (1,)."),
]
