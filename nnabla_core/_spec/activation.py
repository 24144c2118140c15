"""Neural network activation functions."""
from __future__ import annotations

from . import shapes
from .args import check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Neural Network Activation Functions"
X = (Input("x"),)
Y = (Output("y"),)
NEEDS_X = Needs(inputs=("x",))
NEEDS_Y = Needs(outputs=("y",))
INPLACE = Arg("inplace", "bool", False)


def _unary(name, snake, needs, doc, args=(), **kw):
    return FunctionSpec(name, snake, CATEGORY, X, args, Y, shapes.same, needs, doc=doc, **kw)


def _axis_resolver(arg_name, default_last):
    """Build a resolver normalising ``arg_name`` (``None`` -> last axis when allowed)."""
    def resolve(spec, in_shapes, args):
        ndim = len(in_shapes[0])
        axis = args[arg_name]
        if axis is None and default_last:
            axis = ndim - 1
        if ndim == 0:
            raise spec.shape_error("x", "at least 1 dimension", in_shapes[0])
        return {**args, arg_name: check_axis(spec, arg_name, axis, ndim)}
    resolve.__name__ = f"resolve_{arg_name}"
    return resolve


def doubled_axis(spec, x, *, axis, **args):
    """CReLU / CELU: the positive and negative parts are concatenated along ``axis``."""
    out = list(x)
    out[axis] *= 2
    return (tuple(out),)


def prelu(spec, x, slope, *, base_axis):
    """PReLU: the slope is a single value or one value per channel ``x.shape[base_axis]``."""
    size = 1
    for d in slope:
        size *= d
    if size != 1 and tuple(slope) != (x[base_axis],):
        raise spec.shape_error("x1", f"a single value or ({x[base_axis]},)", slope,
                               why=f"one slope per channel of x.shape[{base_axis}] "
                                   f"(x.shape={tuple(x)})")
    return (tuple(x),)


SOFTMAX_AXIS = _axis_resolver("axis", default_last=True)
SPECS = [
    _unary("Sigmoid", "sigmoid", NEEDS_Y, "Logistic sigmoid: y = 1 / (1 + exp(-x))."),
    _unary("Swish", "swish", Needs(inputs=("x",), outputs=("y",)),
           "Swish: y = x * sigmoid(x)."),
    _unary("Tanh", "tanh", NEEDS_Y, "Hyperbolic tangent: y = tanh(x)."),
    _unary("ReLU", "relu", NEEDS_Y, "Rectified linear unit: y = max(0, x).", (INPLACE,)),
    _unary("LeakyReLU", "leaky_relu", Needs(inputs=("x",), outputs=("y",)),
           "Leaky ReLU: y = x if x > 0 else alpha * x.",
           (Arg("alpha", "float", 0.1), INPLACE)),
    _unary("Softmax", "softmax", NEEDS_Y,
           "Softmax along `axis` (default: the last): y = exp(x) / sum(exp(x), axis).",
           (Arg("axis", "int?", None),), resolve_args=SOFTMAX_AXIS),
    _unary("LogSoftmax", "log_softmax", NEEDS_Y,
           "Log-softmax along `axis` (default: the last): y = x - log(sum(exp(x), axis)).",
           (Arg("axis", "int?", None),), resolve_args=SOFTMAX_AXIS),
    _unary("ELU", "elu", NEEDS_X,
           "Exponential linear unit: y = x if x >= 0 else alpha * (exp(x) - 1).",
           (Arg("alpha", "float", 1.0),)),
    _unary("SELU", "selu", NEEDS_X,
           "Scaled ELU: y = scale * x if x > 0 else scale * alpha * (exp(x) - 1).",
           (Arg("scale", "float", 1.05070098735548), Arg("alpha", "float", 1.673263242354377))),
    FunctionSpec("CReLU", "crelu", CATEGORY, X, (Arg("axis", "int", 1),), Y, doubled_axis,
                 NEEDS_X, resolve_args=_axis_resolver("axis", False),
                 doc="Concatenated ReLU: concat(relu(x), relu(-x)) along `axis`."),
    FunctionSpec("CELU", "celu", CATEGORY, X,
                 (Arg("alpha", "float", 1.0), Arg("axis", "int", 1)), Y, doubled_axis,
                 NEEDS_X, resolve_args=_axis_resolver("axis", False),
                 doc="Concatenated ELU: concat(elu(x, alpha), elu(-x, alpha)) along `axis`."),
    FunctionSpec("PReLU", "prelu", CATEGORY, (Input("x0"), Input("x1", parameter=True)),
                 (Arg("base_axis", "int", 1),), Y, prelu, Needs(inputs=("x0", "x1")),
                 resolve_args=_axis_resolver("base_axis", False),
                 doc="Parametric ReLU: y = x0 if x0 >= 0 else x1 * x0, with the slope x1 "
                     "shared or per channel of axis `base_axis`."),
    _unary("GELU", "gelu", NEEDS_X,
           "Gaussian error linear unit, tanh approximation: "
           "y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))."),
    _unary("Mish", "mish", NEEDS_X, "Mish: y = x * tanh(softplus(x))."),
    _unary("ReLU6", "relu6", NEEDS_X, "ReLU capped at 6: y = min(max(x, 0), 6)."),
    _unary("HardSigmoid", "hard_sigmoid", NEEDS_X,
           "Hard sigmoid: y = clip(0.2 x + 0.5, 0, 1)."),
    _unary("HardTanh", "hard_tanh", NEEDS_X, "Hard tanh: y = clip(x, -1, 1)."),
    _unary("LogSigmoid", "log_sigmoid", NEEDS_X, "Log of the sigmoid: y = -log(1 + exp(-x))."),
    _unary("SoftPlus", "softplus", NEEDS_X,
           "Softplus: y = log(1 + exp(beta x)) / beta.", (Arg("beta", "float", 1.0),)),
    _unary("SoftSign", "softsign", NEEDS_X, "Softsign: y = x / (1 + |x|)."),
    _unary("TanhShrink", "tanh_shrink", NEEDS_X, "Tanh shrink: y = x - tanh(x)."),
    _unary("Sinc", "sinc", NEEDS_X, "Unnormalised sinc: y = sin(x) / x, and 1 at x = 0."),
]
