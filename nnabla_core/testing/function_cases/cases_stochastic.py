"""Cases of the stochastic functions.

Random draws cannot be compared to a numpy formula, so most cases check shapes
only (``ref=None``) or use arguments that make the function deterministic
(crop to the full size, zero shifts, p=0). Every case has an explicit seed, so
a fresh kernel repeats the same draws: the central-difference check of the
backward pass then holds with the draws fixed. ``test_stochastic.py`` checks
the statistics, masks and seeding.
"""
from .case import Case, Normal, Positive

S = (2, 3, 4)
IMG = (2, 3, 6, 7)
SEED = {"seed": 313}


def _shape_only(name, args, inputs=(), **kw):
    return Case(name, list(inputs), {**args, **SEED}, grad=False, **kw)


CASES = [
    Case("Dropout", [Normal(S)], {"p": 0.0, **SEED}, ref=lambda x, p, seed: x, id="p0"),
    Case("Dropout", [Normal(S)], {"p": 0.3, **SEED}),
    Case("Dropout", [Normal(S)], {"p": 0.9, **SEED}, id="p0.9"),
    _shape_only("Rand", {"low": -2, "high": 3, "shape": (3, 4)}),
    _shape_only("Rand", {"shape": ()}, id="scalar"),
    _shape_only("Randint", {"low": -5, "high": 7, "shape": (5,)}),
    _shape_only("Randn", {"mu": 1, "sigma": 2, "shape": (2, 0)}, id="empty"),
    _shape_only("Randn", {"shape": (4, 5)}),
    _shape_only("RandBinomial", {"n": 5, "p": 0.3, "shape": (4, 3)}),
    _shape_only("RandBeta", {"alpha": 2, "beta": 3, "shape": (4,)}),
    _shape_only("RandGamma", {"k": 2, "theta": 0.5, "shape": (3, 2)}),
    Case("RandomChoice", [Normal(S), Positive(S)], {"shape": (5,), **SEED}, grad_inputs=(0,)),
    Case("RandomChoice", [Normal((3, 6)), Positive((3, 6))],
         {"shape": (2, 2), "replace": False, **SEED}, grad_inputs=(0,), id="no-replace"),
    Case("RandomChoice", [Normal((3, 6)), Positive((3, 6))], SEED, grad_inputs=(0,),
         id="one-draw"),
    Case("RandomCrop", [Normal(S)], SEED, ref=lambda x, seed: x, id="full"),
    Case("RandomCrop", [Normal(IMG)], {"shape": (4, 5), **SEED}),
    Case("RandomCrop", [Normal(IMG)], {"shape": (2, 3, 3), "base_axis": 2, **SEED},
         id="base_axis2"),
    Case("RandomCrop", [Normal(S)], {"shape": (2, 2, 2), "base_axis": 0, **SEED},
         id="base_axis0"),
    Case("RandomFlip", [Normal(S)], SEED),
    Case("RandomFlip", [Normal(IMG)], {"axes": (2, 3), **SEED}, id="two-axes"),
    Case("RandomFlip", [Normal(S)], {"axes": (0, -1), "base_axis": 0, **SEED},
         id="base_axis0"),
    Case("RandomShift", [Normal(S)], SEED, ref=lambda x, seed: x, id="no-shift"),
    *[Case("RandomShift", [Normal(IMG)], {"shifts": (2, 3), "border_mode": mode,
                                           "constant_value": -1.5, **SEED}, id=mode)
      for mode in ("nearest", "reflect", "constant")],
    Case("RandomShift", [Normal(S)], {"shifts": (1, 1, 1), "base_axis": 0, **SEED},
         id="base_axis0"),
    Case("RandomErase", [Normal(IMG)], {"prob": 0.9, "n": 2, **SEED}),
    Case("RandomErase", [Normal(IMG)], {"prob": 1.0, "share": False, **SEED}, id="no-share"),
    Case("RandomErase", [Normal((2, 6, 7, 3))], {"channel_last": True, "prob": 1.0, **SEED},
         id="channel-last"),
    Case("RandomErase", [Normal(IMG)], {"prob": 0.0, **SEED}, ref=lambda x, **k: x,
         id="prob0"),
]
