"""Cases of the arithmetic functions."""
import numpy as np

from .case import Case, Fixed, Normal, Positive

S = (2, 3, 4)
B = (2, 1, 4)


def _pair(name, ref, gen0=Normal(S), gen1=Normal(B), **kw):
    return [Case(name, [gen0, gen1], ref=ref, **kw),
            Case(name, [gen1, gen0], ref=ref, id="broadcast-left", **kw)]


CASES = [
    *_pair("Add2", lambda a, b, **k: a + b),
    *_pair("Sub2", lambda a, b, **k: a - b),
    *_pair("Mul2", lambda a, b, **k: a * b),
    *_pair("Div2", lambda a, b, **k: a / b, Positive(S), Positive(B)),
    *_pair("Pow2", lambda a, b, **k: a ** b, Positive(S), Positive(B)),
    Case("Maximum2", [Fixed(np.arange(24).reshape(S) % 7 - 3.0 + 0.25),
                      Fixed(np.arange(8).reshape(B) % 5 - 2.0)], ref=lambda a, b: np.maximum(a, b)),
    Case("Minimum2", [Fixed(np.arange(24).reshape(S) % 7 - 3.0 + 0.25),
                      Fixed(np.arange(8).reshape(B) % 5 - 2.0)], ref=lambda a, b: np.minimum(a, b)),
    Case("AddN", [[Normal(S), Normal(S), Normal(B)]], ref=lambda xs: xs[0] + xs[1] + xs[2]),
    Case("MulN", [[Normal(S), Normal(S), Normal(B)]], ref=lambda xs: xs[0] * xs[1] * xs[2]),
    Case("AddScalar", [Normal(S)], {"val": 1.5}, ref=lambda x, val: x + val),
    Case("MulScalar", [Normal(S)], {"val": -2.5}, ref=lambda x, val: x * val),
    Case("PowScalar", [Positive(S)], {"val": 2.5}, ref=lambda x, val: x ** val),
    Case("RSubScalar", [Normal(S)], {"val": 2.0}, ref=lambda x, val: val - x),
    Case("RDivScalar", [Positive(S)], {"val": 3.0}, ref=lambda x, val: val / x),
    Case("RPowScalar", [Normal(S)], {"val": 2.0}, ref=lambda x, val: val ** x),
    Case("MaximumScalar", [Fixed(np.linspace(-2.1, 2.3, 24).reshape(S))], {"val": 0.5},
         ref=lambda x, val: np.maximum(x, val)),
    Case("MinimumScalar", [Fixed(np.linspace(-2.1, 2.3, 24).reshape(S))], {"val": 0.5},
         ref=lambda x, val: np.minimum(x, val)),
]
