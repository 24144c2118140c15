"""Cases of the math functions (and CumSum/CumProd)."""
import math

import numpy as np
from .case import Case, Fixed, Normal, Positive, Uniform

S = (2, 3, 4)
NORMAL = Normal(S)
_erf = np.vectorize(math.erf)


def _unary(name, ref, gen=NORMAL, **kw):
    return Case(name, [gen], ref=lambda x: ref(x), **kw)


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# Values away from rounding jumps, plus exact halves (C rounds them away from zero).
_ROUNDING = Fixed(np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5],
                            [-1.7, -0.2, 0.0, 0.3, 1.2, 3.9]]))


def batch_matmul(a, b, transpose_a=False, transpose_b=False):
    a = np.swapaxes(a, -1, -2) if transpose_a else a
    b = np.swapaxes(b, -1, -2) if transpose_b else b
    return np.einsum("...ik,...kj->...ij", a, b)


def cumulative(op, identity):
    """Reference scan written as an explicit loop over the axis."""
    def ref(x, axis=None, exclusive=False, reverse=False):
        axis = 0 if axis is None else axis
        xm = np.moveaxis(x.astype(np.float64), axis, 0)
        n = xm.shape[0]
        order = range(n - 1, -1, -1) if reverse else range(n)
        out, acc = np.empty_like(xm), np.full(xm.shape[1:], identity, np.float64)
        for i in order:
            if exclusive:
                out[i], acc = acc, op(acc, xm[i])
            else:
                acc = op(acc, xm[i])
                out[i] = acc
        return np.moveaxis(out, 0, axis)
    return ref


cumsum = cumulative(np.add, 0.0)
cumprod = cumulative(np.multiply, 1.0)
_WITH_ZEROS = Fixed(np.array([[1.5, 0.0, 2.0, -1.2], [0.7, 1.1, 0.0, 0.0],
                              [-0.9, 1.3, 0.8, 1.6]]))

CASES = [
    Case("Abs", [Fixed(np.linspace(-2.05, 2.1, 24).reshape(S))], ref=np.abs),
    _unary("Exp", np.exp),
    _unary("Log", np.log, Positive(S)),
    _unary("Identity", lambda x: x),
    _unary("Round", _round_half_away, _ROUNDING, grad=False),
    _unary("Ceil", np.ceil, _ROUNDING, grad=False),
    _unary("Floor", np.floor, _ROUNDING, grad=False),
    _unary("Sin", np.sin),
    _unary("Cos", np.cos),
    _unary("Tan", np.tan, Uniform(S, -1.2, 1.2)),
    _unary("Sinh", np.sinh),
    _unary("Cosh", np.cosh),
    _unary("ASin", np.arcsin, Uniform(S, -0.8, 0.8)),
    _unary("ACos", np.arccos, Uniform(S, -0.8, 0.8)),
    _unary("ATan", np.arctan, Normal(S, 2.0)),
    _unary("ASinh", np.arcsinh, Normal(S, 2.0)),
    _unary("ACosh", np.arccosh, Positive(S, 1.2, 3.0)),
    _unary("ATanh", np.arctanh, Uniform(S, -0.8, 0.8)),
    _unary("Erf", _erf, Normal(S, 1.5)),
    _unary("Erf", _erf, Fixed(np.array([-4.0, -0.5, -1e-6, 0.0, 3e-4, 0.49, 0.5, 6.0])),
           id="edges", fd_atol=3e-4, fd_rtol=3e-4,
           why_loose="the forward is a float32-accurate fit (error < 1.2e-7) joined to a series "
                     "at |x| = 0.5: central differences across the seam (0.49, 0.5) see the fit's "
                     "error divided by the step (1e-7 / 1e-4)"),
    Case("ATan2", [Normal(S), Normal((2, 1, 4))], ref=np.arctan2),
    Case("ATan2", [Normal((1, 3, 1)), Normal(S)], ref=np.arctan2, id="broadcast-left"),
    Case("BatchMatmul", [Normal((2, 3, 4)), Normal((2, 4, 5))], ref=batch_matmul),
    Case("BatchMatmul", [Normal((2, 4, 3)), Normal((2, 5, 4))],
         {"transpose_a": True, "transpose_b": True}, ref=batch_matmul, id="transpose-both"),
    Case("BatchMatmul", [Normal((2, 3, 4)), Normal((2, 5, 4))], {"transpose_b": True},
         ref=batch_matmul, id="transpose-b"),
    Case("BatchMatmul", [Normal((2, 1, 3, 4)), Normal((1, 3, 4, 2))], ref=batch_matmul,
         id="broadcast-batch"),
    Case("CumSum", [Normal(S)], ref=cumsum),
    Case("CumSum", [Normal(S)], {"axis": -1, "exclusive": True}, ref=cumsum, id="exclusive"),
    Case("CumSum", [Normal(S)], {"axis": 1, "reverse": True}, ref=cumsum, id="reverse"),
    Case("CumSum", [Normal(S)], {"axis": 2, "exclusive": True, "reverse": True}, ref=cumsum,
         id="exclusive-reverse"),
    Case("CumProd", [Normal(S)], ref=cumprod),
    Case("CumProd", [Normal(S)], {"axis": 1, "exclusive": True, "reverse": True},
         ref=cumprod, id="exclusive-reverse"),
    Case("CumProd", [_WITH_ZEROS], {"axis": 1}, ref=cumprod, id="zeros"),
    Case("CumProd", [_WITH_ZEROS], {"axis": 1, "reverse": True}, ref=cumprod,
         id="zeros-reverse"),
    Case("CumProd", [_WITH_ZEROS], {"axis": 1, "exclusive": True}, ref=cumprod,
         id="zeros-exclusive"),
    Case("CumProd", [Normal((0, 3))], ref=cumprod, id="empty"),
]
