"""The test-case table format shared by every function family.

A :class:`Case` names a function (its spec type name), describes its inputs,
its arguments and an independent numpy reference. The generic tests in
``tests/functions/test_functions.py`` run every case through ``nnabla.functions``:
forward against the reference, backward against central differences, the ``accum``
rule, and ``type_config='half'`` against float; :mod:`nnabla.testing.backend_kit` runs
them against any backend.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Normal:
    """A float input drawn from N(0, scale^2) (+ shift)."""
    shape: tuple
    scale: float = 1.0
    shift: float = 0.0

    def make(self, rng):
        return (rng.randn(*self.shape) * self.scale + self.shift).astype(np.float32)


@dataclass(frozen=True)
class Uniform:
    shape: tuple
    low: float = -1.0
    high: float = 1.0

    def make(self, rng):
        return rng.uniform(self.low, self.high, self.shape).astype(np.float32)


@dataclass(frozen=True)
class Positive:
    """A float input bounded away from zero (for log, division, pow)."""
    shape: tuple
    low: float = 0.5
    high: float = 2.0

    def make(self, rng):
        return rng.uniform(self.low, self.high, self.shape).astype(np.float32)


@dataclass(frozen=True)
class Int:
    """An integer input (labels, indices), not differentiated."""
    shape: tuple
    low: int = 0
    high: int = 10

    def make(self, rng):
        return rng.randint(self.low, self.high, self.shape).astype(np.int64)


@dataclass(frozen=True)
class Fixed:
    """An explicit array, e.g. values that avoid kinks of max/abs."""
    value: Any

    def make(self, rng):
        v = np.asarray(self.value)
        return v.astype(np.float32) if v.dtype.kind == "f" else v


@dataclass
class Case:
    """One test row for a function.

    Attributes:
        name: spec type name (``'Affine'``).
        inputs: one generator per input (``None`` omits an optional input; a list
            for a variadic input).
        args: keyword arguments for the spec (nnabla's names).
        ref: numpy reference; called with the input arrays (float64) and the
            args; returns an array or a tuple of arrays.
        grad: check backward (False for non-differentiable functions).
        grad_inputs: positions of inputs to check the gradient of (default: all
            float inputs).
        atol, rtol: forward tolerances in float32.
        grad_atol, grad_rtol: tolerances of the backward check.
        half_atol: tolerance of half against float (relative to max |y|).
        check_outputs: positions of outputs compared to the reference.
        second_order: check second-order gradients by central differences (False where
            the data puts points next to a kink, e.g. relu, so differences straddle it).
        id: suffix for the test id.
    """
    name: str
    inputs: list
    args: dict = field(default_factory=dict)
    ref: Callable | None = None
    grad: bool = True
    grad_inputs: tuple | None = None
    atol: float = 1e-5
    rtol: float = 1e-4
    grad_atol: float = 2e-3
    grad_rtol: float = 2e-2
    half_atol: float = 2e-2
    check_outputs: tuple | None = None
    second_order: bool = True
    seed: int = 313
    id: str = ""

    def __str__(self):
        return f"{self.name}-{self.id}" if self.id else self.name

    def make_inputs(self):
        rng = np.random.RandomState(self.seed)
        out = []
        for gen in self.inputs:
            if gen is None:
                out.append(None)
            elif isinstance(gen, (list, tuple)):
                out.append([g.make(rng) for g in gen])
            else:
                out.append(gen.make(rng))
        return out
