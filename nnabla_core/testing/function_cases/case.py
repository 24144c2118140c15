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
        ref: numpy reference; called with the input arrays as generated (float32 for
            float inputs, as the kernels get them) and the
            args; returns an array or a tuple of arrays.
        grad: check backward (False for non-differentiable functions).
        grad_inputs: positions of inputs to check the gradient of (default: all
            float inputs).
        atol, rtol: forward tolerances in float32.
        grad_atol, grad_rtol: float32 tolerances of a backend's gradients against the CPU
            backend's in :mod:`nnabla.testing.backend_kit`: a consistency check, not the
            correctness check (the CPU's own engine-vs-kernel checks use 1e-4).
        fd_atol, fd_rtol: tolerances of the correctness check of backward: the kernel's
            float64 gradient against float64 central differences of its forward
            (``|analytic - numeric| <= fd_atol + fd_rtol |numeric|`` per element). Central
            differences with step 1e-4 are good to ~1e-8 for smooth functions, so a wrong
            derivative cannot pass the default 1e-6; a looser value needs ``why_loose``.
        half_rtol: element-relative tolerance of half against float, forward and backward:
            ``|half - float| <= half_rtol (|float| + half_floor)``, where ``half_floor`` is
            the largest |float| of that output times ``half_floor_ratio``.
        half_floor_ratio: see ``half_rtol`` (absorbs cancellation next to zero).
        half: compare half against float at all (False needs ``why_loose``).
        why_loose: why the case needs an fd or half tolerance looser than the default.
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
    fd_atol: float = 1e-6
    fd_rtol: float = 1e-6
    half_rtol: float = 1e-2
    half_floor_ratio: float = 0.1
    half: bool = True
    why_loose: str = ""
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
