"""Cases of the logical functions: 0/1 float outputs, not differentiable unless noted."""
import numpy as np
from .case import Case, Fixed, Normal

S = (2, 3, 4)
# Small integers so that equal, greater and less all occur, plus zeros for boolean ops.
_A = Fixed(np.arange(24).reshape(S) * 7 % 5 - 2.0)
_B = Fixed(np.arange(8).reshape(2, 1, 4) * 3 % 4 - 1.0)
_SPECIAL = Fixed(np.array([[np.nan, np.inf, -np.inf, 0.0], [1.5, -2.0, np.nan, 3.0]]))
_WITH_NAN = Fixed(np.array([[np.nan, 0.5, -1.0], [1.5, np.nan, 3.0]]))
_WITH_INF = Fixed(np.array([[np.inf, 0.5, -1.0], [1.5, -np.inf, 3.0]]))


def _f(mask):
    return np.asarray(mask, np.float32)


def _binary(name, op):
    return [Case(name, [_A, _B], ref=lambda a, b: _f(op(a, b)), grad=False),
            Case(name, [_B, _A], ref=lambda a, b: _f(op(a, b)), grad=False,
                 id="broadcast-left")]


def _scalar(name, op, val):
    return Case(name, [_A], {"val": val}, ref=lambda x, val: _f(op(x, np.float32(val))),
                grad=False)


def _bool(x):
    return x != 0


def where(condition, x_true, x_false):
    cond = condition.reshape(condition.shape + (1,) * (x_true.ndim - condition.ndim))
    return np.where(cond != 0, x_true, x_false)


def searchsorted(sorted_sequence, values, right=None):
    side = "right" if right else "left"
    rows = [np.searchsorted(s, v, side=side) for s, v in
            zip(sorted_sequence.reshape(-1, sorted_sequence.shape[-1]),
                values.reshape(-1, values.shape[-1]))]
    return np.array(rows, np.float32).reshape(values.shape)


_SEQ = Fixed(np.array([[[0.0, 1.0, 1.0, 2.0, 5.0], [-3.0, -1.0, 0.0, 0.0, 4.0]]]))
_VALS = Fixed(np.array([[[1.0, -1.0, 5.0, 6.0], [0.0, 4.5, -3.0, -9.0]]]))

CASES = [
    Case("Sign", [_A], ref=lambda x, alpha=1.0: np.where(x == 0, alpha, np.sign(x)),
         grad=False),
    Case("Sign", [_A], {"alpha": -0.5}, ref=lambda x, alpha: np.where(x == 0, alpha, np.sign(x)),
         grad=False, id="alpha"),
    *_binary("LogicalAnd", lambda a, b: _bool(a) & _bool(b)),
    *_binary("LogicalOr", lambda a, b: _bool(a) | _bool(b)),
    *_binary("LogicalXor", lambda a, b: _bool(a) ^ _bool(b)),
    *_binary("Equal", np.equal),
    *_binary("NotEqual", np.not_equal),
    *_binary("GreaterEqual", np.greater_equal),
    *_binary("Greater", np.greater),
    *_binary("LessEqual", np.less_equal),
    *_binary("Less", np.less),
    _scalar("LogicalAndScalar", lambda x, v: _bool(x) & bool(v), True),
    _scalar("LogicalOrScalar", lambda x, v: _bool(x) | bool(v), False),
    _scalar("LogicalXorScalar", lambda x, v: _bool(x) ^ bool(v), True),
    _scalar("EqualScalar", np.equal, 1.0),
    Case("EqualScalar", [Fixed(np.array([0.1, 0.2, 1.0]))], ref=lambda x, **a: _f(x == 1),
         grad=False, id="default-val"),
    Case("EqualScalar", [Fixed(np.array([0.1, 0.2, 1.0]))], {"val": 0.1},
         ref=lambda x, val: _f([1, 0, 0]), grad=False, id="float32-val", half=False,
         why_loose="under half, x is read as float16 (as nnabla's half kernels read it) and "
                   "float16(0.1) is not float32(0.1): the first element is 0 there "
                   "(tests/functions/test_functions.py asserts it)"),
    Case("EqualScalar", [Fixed(np.array([0.25, 0.2, 1.0, 0.25]))], {"val": 0.25},
         ref=lambda x, val: _f([1, 0, 0, 1]), grad=False, id="half-exact-val"),
    _scalar("NotEqualScalar", np.not_equal, -1.0),
    _scalar("GreaterEqualScalar", np.greater_equal, 0.0),
    _scalar("GreaterScalar", np.greater, 0.0),
    _scalar("LessEqualScalar", np.less_equal, 1.0),
    _scalar("LessScalar", np.less, 1.0),
    Case("LogicalNot", [_A], ref=lambda x: _f(x == 0), grad=False),
    Case("IsNaN", [_SPECIAL], ref=lambda x: _f(np.isnan(x)), grad=False),
    Case("IsInf", [_SPECIAL], ref=lambda x: _f(np.isinf(x)), grad=False),
    Case("ResetNaN", [_WITH_NAN], {"val": -7.0},
         ref=lambda x, val: np.where(np.isnan(x), val, x)),
    Case("ResetNaN", [Normal(S)], ref=lambda x, val=0: x, id="no-nan"),
    Case("ResetInf", [_WITH_INF], {"val": 2.5},
         ref=lambda x, val: np.where(np.isinf(x), val, x)),
    Case("Where", [Fixed(np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 2.0]])), Normal(S), Normal(S)],
         ref=where, grad_inputs=(1, 2), id="prefix-condition"),
    Case("Where", [Fixed((np.arange(24).reshape(S) % 3 == 0) * 1.0), Normal(S), Normal(S)],
         ref=where, grad_inputs=(1, 2)),
    Case("SearchSorted", [_SEQ, _VALS], ref=searchsorted, grad=False),
    Case("SearchSorted", [_SEQ, _VALS], {"right": True}, ref=searchsorted, grad=False,
         id="right"),
]

CASES.append(Case("Sign", [_SPECIAL], {"alpha": 0.25}, grad=False, id="nan-gives-alpha",
                  ref=lambda x, alpha: np.where(x > 0, 1.0, np.where(x < 0, -1.0, alpha))))
