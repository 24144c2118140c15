"""The solver contract: what a backend registers per solver through ``nnabla_solver_kernels``.

The core's :class:`~nnabla.solver.Solver` keeps parameters, states, step counts and
hyper-parameters; a backend supplies the arithmetic, as a :class:`Rule` per solver type
name (``'Sgd'``, ``'Adam'``...). The solver calls every function below with ``xp``, the
array namespace of the backend's array family, and with that family's float32 arrays
(writable heads: updates are made in place). No array is moved to the host.

``update(xp, p, g, state, t, hp) -> None``:
    ``p`` the parameter, updated in place; ``g`` its gradient (read; Lars' fused weight
    decay adds to it in place, as nnabla); ``state`` maps nnabla's state names (``'mean'``,
    ``'var'``...) to arrays of the parameter's shape, updated in place; ``t`` the
    parameter's step count after this update's increment (1 on the first update);
    ``hp`` the hyper-parameters by nnabla's argument names (float32 scalars, flags stay
    bool) plus ``'weight_decay_rate'`` (the fused decay rate of this update) and
    ``'init_lr'`` (the learning rate given at construction).
"""
from __future__ import annotations

from typing import Callable, NamedTuple

__all__ = ["GradOps", "Rule"]


class GradOps(NamedTuple):
    """The gradient helpers behind ``Solver.weight_decay``, ``clip_grad_by_norm``,
    ``scale_grad`` and the inf/nan checks.

    Attributes:
        weight_decay: ``(xp, p, g, rate)``: ``g += rate * p`` in place.
        clip_grad_by_norm: ``(xp, g, clip_norm)``: rescale ``g`` in place to L2 norm
            ``clip_norm`` when its norm is larger.
        scale_grad: ``(xp, g, scale)``: ``g *= scale`` in place.
        has_inf, has_nan, has_inf_or_nan: ``(xp, g) -> bool``.
    """

    weight_decay: Callable
    clip_grad_by_norm: Callable
    scale_grad: Callable
    has_inf: Callable
    has_nan: Callable
    has_inf_or_nan: Callable


class Rule(NamedTuple):
    """One solver's arithmetic on one backend.

    Attributes:
        update: ``update(xp, p, g, state, t, hp) -> None`` (see the module doc).
        states: names of the state arrays always allocated (zero-filled).
        optional_states: ``(state name, hyper-parameter flag)`` pairs; the state is
            allocated only when ``hp[flag]`` is true.
        grad_ops: the backend's :class:`GradOps`.
    """

    update: Callable
    states: tuple = ()
    optional_states: tuple = ()
    grad_ops: GradOps = None
