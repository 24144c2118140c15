"""The function spec table: every function's interface, in one place.

``SPECS`` maps nnabla's function type name (``'Affine'``) to its
:class:`FunctionSpec`; ``BY_SNAKE`` maps the ``F.`` name (``'affine'``).
Each category module exports a list ``SPECS``.
"""
from __future__ import annotations

from .._modules import category_modules
from .base import ALL_INPUTS, REQUIRED, Arg, FunctionSpec, Input, Needs, Output  # noqa: F401

CATEGORY_MODULES = (
    "arithmetic", "math", "activation", "neural_network", "normalization", "reduction",
    "array", "loss", "logical", "stochastic", "validation", "recurrent", "nn_advanced",
    "array_extra", "normalization_extra",
    "signal", "geometry",
    "quantization", "misc",
)


def _collect():
    specs = {}
    for _, module in category_modules(__name__, CATEGORY_MODULES):
        for spec in module.SPECS:
            if spec.name in specs:
                raise ValueError(f"function {spec.name} is specified twice")
            specs[spec.name] = spec
    return specs


SPECS = _collect()
BY_SNAKE = {s.snake: s for s in SPECS.values()}
