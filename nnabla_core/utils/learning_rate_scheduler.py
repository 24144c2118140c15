"""``nnabla.utils.learning_rate_scheduler``: learning rate as a function of the iteration.

Each scheduler answers ``get_learning_rate(iter)`` for an iteration counted from 0; the
training loop passes the value to ``solver.set_learning_rate``.
"""
from __future__ import annotations

import math


class BaseLearningRateScheduler:
    """Base class of the schedulers: override :meth:`get_learning_rate`."""

    def get_learning_rate(self, iter):
        """The learning rate at iteration ``iter``.

        Args:
            iter (int): Current iteration, from 0.

        Returns:
            float: The learning rate.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not define get_learning_rate(iter)")


class PolynomialScheduler(BaseLearningRateScheduler):
    """Polynomial decay: ``init_lr * (1 - iter / max_iter) ** power``.

    Args:
        init_lr (float): Learning rate at iteration 0.
        max_iter (int): Iteration at which the rate reaches 0.
        power (float): Exponent of the decay.

    Example:
        >>> PolynomialScheduler(0.1, 100, 2.0).get_learning_rate(50)
        0.025
    """

    def __init__(self, init_lr, max_iter, power):
        self.init_lr = init_lr
        self.max_iter = max_iter
        self.power = power

    def get_learning_rate(self, iter):
        """The decayed learning rate at iteration ``iter`` (from 0)."""
        return self.init_lr * (1.0 - iter / self.max_iter) ** self.power


class CosineScheduler(BaseLearningRateScheduler):
    """Cosine decay: ``init_lr * (cos(pi * iter / max_iter) + 1) / 2``.

    Args:
        init_lr (float): Learning rate at iteration 0.
        max_iter (int): Iteration at which the rate reaches 0.

    Example:
        >>> CosineScheduler(0.1, 100).get_learning_rate(50)
        0.05
    """

    def __init__(self, init_lr, max_iter):
        self.init_lr = init_lr
        self.max_iter = max_iter

    def get_learning_rate(self, iter):
        """The decayed learning rate at iteration ``iter`` (from 0)."""
        return self.init_lr * ((math.cos(iter / self.max_iter * math.pi) + 1.0) * 0.5)


class ExponentialScheduler(BaseLearningRateScheduler):
    """Exponential decay: ``init_lr * gamma ** (iter // iter_interval)``.

    Args:
        init_lr (float): Learning rate at iteration 0.
        gamma (float): Factor applied every ``iter_interval`` iterations.
        iter_interval (int): Period of the decay, in iterations.

    Example:
        >>> ExponentialScheduler(1.0, 0.5, iter_interval=10).get_learning_rate(25)
        0.25
    """

    def __init__(self, init_lr, gamma, iter_interval=1):
        self.init_lr = init_lr
        self.gamma = gamma
        self.iter_interval = iter_interval

    def get_learning_rate(self, iter):
        """The decayed learning rate at iteration ``iter`` (from 0)."""
        return self.init_lr * self.gamma ** (iter // self.iter_interval)


class StepScheduler(BaseLearningRateScheduler):
    """Step decay: ``init_lr`` times ``gamma`` once for each step iteration reached.

    Args:
        init_lr (float): Learning rate at iteration 0.
        gamma (float): Factor applied at each step.
        iter_steps (list of int): Iterations from which one more factor ``gamma`` applies.

    Example:
        >>> StepScheduler(1.0, 0.5, [10, 20]).get_learning_rate(15)
        0.5
    """

    def __init__(self, init_lr, gamma, iter_steps):
        self.init_lr = init_lr
        self.gamma = gamma
        self.iter_steps = iter_steps

    def get_learning_rate(self, iter):
        """The learning rate at iteration ``iter`` (from 0)."""
        learning_rate = self.init_lr
        for step in self.iter_steps:
            if iter >= step:
                learning_rate *= self.gamma
        return learning_rate


class LinearWarmupScheduler(BaseLearningRateScheduler):
    """Linear warm-up in front of another scheduler.

    For ``iter < warmup_iter`` the rate is the wrapped scheduler's times
    ``(iter + 1) / warmup_iter``; afterwards it is the wrapped scheduler's.

    Args:
        scheduler (BaseLearningRateScheduler): The scheduler to warm up.
        warmup_iter (int): Length of the warm-up, in iterations.

    Example:
        >>> base = StepScheduler(1.0, 0.5, [])
        >>> LinearWarmupScheduler(base, 4).get_learning_rate(1)
        0.5
    """

    def __init__(self, scheduler, warmup_iter):
        self.scheduler = scheduler
        self.warmup_iter = warmup_iter

    def get_learning_rate(self, iter):
        """The learning rate at iteration ``iter`` (from 0)."""
        learning_rate = self.scheduler.get_learning_rate(iter)
        if iter < self.warmup_iter:
            learning_rate *= (iter + 1) / self.warmup_iter
        return learning_rate
