"""Cases of the loss functions, with independent numpy references."""
import numpy as np
from .case import Case, Fixed, Int, Normal, Positive, Uniform

S = (2, 3, 4)


def _softmax_ce(x, t, axis=None):
    axis = x.ndim - 1 if axis is None else axis % x.ndim
    x = np.moveaxis(x, axis, -1)
    t = np.moveaxis(t, axis, -1)[..., 0]
    lse = np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)) + x.max(-1)
    picked = np.take_along_axis(x, np.maximum(t, 0)[..., None], -1)[..., 0]
    y = np.where(t < 0, 0.0, lse - picked)
    return np.moveaxis(y[..., None], -1, axis)


def _categorical_ce(x, t, axis=None):
    axis = x.ndim - 1 if axis is None else axis % x.ndim
    onehot = np.arange(x.shape[axis]).reshape([-1 if i == axis else 1 for i in range(x.ndim)])
    picked = (x * (onehot == t)).sum(axis, keepdims=True)
    return np.where(t < 0, 0.0, -np.log(np.where(t < 0, 1.0, picked)))


def _sigmoid_ce(x, t):
    p = 1 / (1 + np.exp(-x))
    return -(t * np.log(p) + (1 - t) * np.log(1 - p))


def _binary_ce(x, t):
    return -(t * np.log(x) + (1 - t) * np.log(1 - x))


def _huber(x0, x1, delta=1.0):
    d = np.abs(x0 - x1)
    return np.where(d < delta, d ** 2, delta * (2 * d - delta))


def _eps_insensitive(x0, x1, epsilon):
    return np.maximum(np.abs(x0 - x1) - epsilon, 0)


def _kl(p, q, base_axis=1):
    terms = p * (np.log(p + 1e-8) - np.log(q + 1e-8))
    axes = tuple(range(base_axis, p.ndim))
    return terms.sum(axes).reshape(p.shape[:base_axis] + (1,))


def _probabilities(shape, axis):
    """Rows that sum to one along ``axis``, bounded away from zero."""
    v = np.random.RandomState(7).uniform(0.2, 1.0, shape)
    return Fixed(v / v.sum(axis, keepdims=True))


def _not_near(value, shape, gap=0.05, seed=3):
    """Differences x0 - x1 kept `gap` away from the kinks at +-value."""
    d = np.random.RandomState(seed).uniform(-2, 2, shape)
    d = np.where(np.abs(np.abs(d) - value) < gap, d + 2 * gap, d)
    return Fixed(d)


_NEG_LABELS = Fixed(np.array([[[2], [-1], [0]], [[4], [1], [-3]]]))   # (2, 3, 1), C = 5

CASES = [
    Case("SoftmaxCrossEntropy", [Normal(S), Int((2, 3, 1), 0, 4)], ref=_softmax_ce),
    Case("SoftmaxCrossEntropy", [Normal(S), Int((2, 1, 4), 0, 3)], {"axis": 1},
         ref=_softmax_ce, id="axis1"),
    Case("SoftmaxCrossEntropy", [Normal(S), Int((1, 3, 4), 0, 2)], {"axis": -3},
         ref=_softmax_ce, id="axis-negative"),
    Case("SoftmaxCrossEntropy", [Normal((2, 3, 5), 3.0), _NEG_LABELS], ref=_softmax_ce,
         id="negative-labels-ignored"),
    Case("SoftmaxCrossEntropy", [Normal((0, 5)), Int((0, 1), 0, 5)], ref=_softmax_ce,
         id="empty"),
    Case("CategoricalCrossEntropy", [_probabilities(S, -1), Int((2, 3, 1), 0, 4)],
         ref=_categorical_ce),
    Case("CategoricalCrossEntropy", [_probabilities(S, 1), Int((2, 1, 4), 0, 3)],
         {"axis": 1}, ref=_categorical_ce, id="axis1"),
    Case("CategoricalCrossEntropy", [_probabilities((2, 3, 5), -1), _NEG_LABELS],
         ref=_categorical_ce, id="negative-labels-ignored"),
    Case("SigmoidCrossEntropy", [Normal(S, 2.0), Int(S, 0, 2)], ref=_sigmoid_ce),
    Case("BinaryCrossEntropy", [Uniform(S, 0.1, 0.9), Uniform(S, 0.0, 1.0)], ref=_binary_ce),
    Case("SquaredError", [Normal(S), Normal(S)], ref=lambda a, b: (a - b) ** 2),
    Case("SquaredError", [Normal(S), Normal((2, 1, 4))], ref=lambda a, b: (a - b) ** 2,
         id="broadcast"),
    Case("AbsoluteError", [_not_near(0, S), Fixed(np.zeros(S))], ref=lambda a, b: np.abs(a - b)),
    Case("AbsoluteError", [_not_near(0, S), Fixed(np.full((1, 3, 1), 0.01))],
         ref=lambda a, b: np.abs(a - b), id="broadcast"),
    Case("HuberLoss", [_not_near(1.0, S), Fixed(np.zeros(S))], ref=_huber),
    Case("HuberLoss", [_not_near(0.5, S), Fixed(np.zeros(S))], {"delta": 0.5}, ref=_huber,
         id="delta0.5"),
    Case("EpsilonInsensitiveLoss", [_not_near(0.3, S), Fixed(np.zeros((2, 1, 4)))],
         {"epsilon": 0.3}, ref=_eps_insensitive),
    Case("KLMultinomial", [_probabilities((2, 5), -1), Positive((2, 5), 0.1, 1.0)], ref=_kl),
    Case("KLMultinomial", [_probabilities((2, 3, 4), (1, 2)), Positive(S, 0.1, 1.0)],
         {"base_axis": 1}, ref=_kl, id="3d", fd_atol=2e-5, fd_rtol=2e-5,
         why_loose="p down to 0.017: the third derivative of p log p (1/p^2, ~3e3) puts the "
                   "central-difference truncation (step^2 / 6 times it) near 4e-6"),
    Case("KLMultinomial", [_probabilities((2, 3, 4), 2), Positive(S, 0.1, 1.0)],
         {"base_axis": 2}, ref=_kl, id="base_axis2"),
]

CASES.append(Case("KLMultinomial", [Positive((2, 3, 4), 0.1, 1.0), Positive((2, 3, 4), 0.1, 1.0)],
                  {"base_axis": -2}, id="negative-base-axis",
                  ref=lambda p, q, base_axis: (p * (np.log(p + 1e-8) - np.log(q + 1e-8)))
                  .sum(axis=(1, 2)).reshape(2, 1)))
