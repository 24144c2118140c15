"""Cases of the activation functions, with plain numpy references."""
import numpy as np
from .case import Case, Fixed, Normal

S = (2, 3, 4)
NORMAL = Normal(S)
# Kink-free inputs: |x| >= 0.05 and away from the clipping points of ReLU6 / hard functions.
_KINKS = Fixed(np.array([[-7.0, -3.1, -2.2, -1.3, -0.45, -0.05],
                         [0.05, 0.7, 0.95, 1.4, 2.2, 3.0],
                         [5.5, 6.3, 2.45, -2.45, -0.9, 1.1]]))
_LARGE = Fixed(np.array([-200.0, -30.0, -1.0, 0.5, 30.0, 200.0]))


def _sig(x):
    return np.exp(-np.logaddexp(0.0, -np.asarray(x, np.float64)))


def _softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0)


def _elu(x, alpha):
    return np.where(x >= 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1))


def softmax(x, axis=None):
    axis = -1 if axis is None else axis
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=None):
    return np.log(softmax(x, axis))


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def prelu(x, w, base_axis=1):
    if w.size == 1:
        slope = w.reshape(())
    else:
        slope = w.reshape((-1,) + (1,) * (x.ndim - base_axis - 1))
    return np.where(x >= 0, x, slope * x)


def _unary(name, ref, gen=NORMAL, **kw):
    return Case(name, [gen], ref=lambda x, **a: ref(x, **a), **kw)


CASES = [
    _unary("Sigmoid", _sig),
    _unary("Sigmoid", _sig, _LARGE, id="large", grad=False),
    _unary("Swish", lambda x: x * _sig(x)),
    _unary("Tanh", np.tanh),
    _unary("ReLU", lambda x, inplace=False: np.maximum(x, 0), _KINKS),
    _unary("ReLU", lambda x: np.maximum(x, 0), Normal((0, 3)), id="empty"),
    _unary("LeakyReLU", lambda x, alpha=0.1: np.where(x > 0, x, alpha * x), _KINKS),
    Case("LeakyReLU", [_KINKS], {"alpha": -0.3, "inplace": False},
         ref=lambda x, alpha, inplace: np.where(x > 0, x, alpha * x), id="negative-alpha"),
    _unary("Softmax", softmax),
    Case("Softmax", [Normal(S, 3.0)], {"axis": 1}, ref=softmax, id="axis1", half_rtol=2e-2,
         why_loose="inputs of scale 3 put probabilities near 1: the gradient y (dy - sum(y dy)) "
                   "cancels to a few percent of its terms, whose half rounding then shows"),
    Case("Softmax", [_LARGE], ref=softmax, id="large"),
    _unary("LogSoftmax", log_softmax),
    Case("LogSoftmax", [Normal(S, 3.0)], {"axis": -3}, ref=log_softmax, id="axis0"),
    Case("LogSoftmax", [Fixed(np.array([[-200.0, 0.0, 150.0], [1.0, 2.0, 3.0]]))],
         ref=lambda x, **a: x - x.max(-1, keepdims=True)
         - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
         id="large", grad=False),
    _unary("ELU", lambda x, alpha=1.0: _elu(x, alpha), _KINKS),
    Case("ELU", [_KINKS], {"alpha": 0.5}, ref=lambda x, alpha: _elu(x, alpha), id="alpha"),
    _unary("SELU", lambda x, scale=1.05070098735548, alpha=1.673263242354377:
           scale * _elu(x, alpha), _KINKS),
    Case("SELU", [_KINKS], {"scale": 2.0, "alpha": 0.5},
         ref=lambda x, scale, alpha: scale * _elu(x, alpha), id="args"),
    Case("CReLU", [_KINKS], ref=lambda x, axis=1: np.concatenate(
        [np.maximum(x, 0), np.maximum(-x, 0)], axis)),
    Case("CReLU", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S))], {"axis": 0},
         ref=lambda x, axis: np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], axis),
         id="axis0"),
    Case("CELU", [_KINKS], ref=lambda x, alpha=1.0, axis=1: np.concatenate(
        [_elu(x, alpha), _elu(-x, alpha)], axis)),
    Case("CELU", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S))], {"alpha": 2.0, "axis": -1},
         ref=lambda x, alpha, axis: np.concatenate([_elu(x, alpha), _elu(-x, alpha)], axis),
         id="axis-last"),
    Case("PReLU", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S)), Fixed(np.array([0.25]))],
         ref=prelu, id="shared"),
    Case("PReLU", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S)),
                   Fixed(np.array([0.1, -0.3, 0.6]))], ref=prelu, id="per-channel"),
    Case("PReLU", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S)),
                   Fixed(np.array([0.1, 0.2, 0.3, 0.4]))], {"base_axis": 2}, ref=prelu,
         id="base-axis2"),
    _unary("GELU", gelu),
    _unary("Mish", lambda x: x * np.tanh(_softplus(x))),
    _unary("Mish", lambda x: x * np.tanh(_softplus(x)), _LARGE, id="large", grad=False),
    _unary("ReLU6", lambda x: np.minimum(np.maximum(x, 0), 6), _KINKS),
    _unary("HardSigmoid", lambda x: np.maximum(0, np.minimum(1, 0.2 * x + 0.5)), _KINKS),
    _unary("HardTanh", lambda x: np.maximum(-1, np.minimum(1, x)), _KINKS),
    _unary("LogSigmoid", lambda x: np.log(_sig(x))),
    _unary("LogSigmoid", lambda x: -_softplus(-x), _LARGE, id="large"),
    _unary("SoftPlus", lambda x, beta=1.0: np.log1p(np.exp(beta * x)) / beta),
    Case("SoftPlus", [Normal(S)], {"beta": 2.5},
         ref=lambda x, beta: np.log1p(np.exp(beta * x)) / beta, id="beta"),
    _unary("SoftPlus", lambda x, beta=1.0: _softplus(beta * x) / beta, _LARGE, id="large"),
    _unary("SoftSign", lambda x: x / (1 + np.abs(x)), _KINKS),
    _unary("TanhShrink", lambda x: x - np.tanh(x)),
    _unary("Sinc", lambda x: np.sinc(x / np.pi)),
    _unary("Sinc", lambda x: np.sinc(x / np.pi), Fixed(np.array([0.0, 1e-3, -2.0, 7.0])),
           id="zero", grad=False),
]

# nnabla computes max(0, x) so that NaN maps to 0.
_NAN = Fixed(np.array([[np.nan, -1.0, 2.0]]))
CASES += [
    Case("ReLU", [_NAN], ref=lambda x, **a: np.array([[0.0, 0.0, 2.0]]), grad=False, id="nan"),
    Case("CReLU", [_NAN], ref=lambda x, **a: np.array([[0.0, 0.0, 2.0, 0.0, 1.0, 0.0]]),
         grad=False, id="nan"),
]
