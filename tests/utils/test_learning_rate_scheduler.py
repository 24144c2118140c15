"""Tests of nnabla.utils.learning_rate_scheduler against closed-form numpy formulas."""
import doctest
import inspect

import nnabla.utils.learning_rate_scheduler as lrs
import numpy as np
import pytest

ITERATIONS = [0, 1, 2, 7, 25, 49, 50, 99, 100, 149, 150, 999]


def rates(scheduler, iterations=ITERATIONS):
    return np.array([scheduler.get_learning_rate(i) for i in iterations])


@pytest.mark.parametrize("init_lr,max_iter,power", [(0.1, 1000, 2.0), (1.0, 1000, 0.9),
                                                    (0.01, 1000, 1.0)])
def test_polynomial_decay(init_lr, max_iter, power):
    it = np.array(ITERATIONS, dtype=np.float64)
    np.testing.assert_allclose(rates(lrs.PolynomialScheduler(init_lr, max_iter, power)),
                               init_lr * (1 - it / max_iter) ** power, rtol=1e-12)


@pytest.mark.parametrize("init_lr,max_iter", [(0.1, 1000), (2.0, 150)])
def test_cosine_decay(init_lr, max_iter):
    it = np.array(ITERATIONS, dtype=np.float64)
    np.testing.assert_allclose(rates(lrs.CosineScheduler(init_lr, max_iter)),
                               init_lr * 0.5 * (1 + np.cos(np.pi * it / max_iter)),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("init_lr,gamma,iter_interval", [(0.1, 0.9, 1), (1.0, 0.5, 50),
                                                         (0.3, 0.1, 7)])
def test_exponential_decay_every_iter_interval(init_lr, gamma, iter_interval):
    it = np.array(ITERATIONS)
    np.testing.assert_allclose(
        rates(lrs.ExponentialScheduler(init_lr, gamma, iter_interval)),
        init_lr * gamma ** np.floor(it / iter_interval), rtol=1e-12)


def test_exponential_interval_defaults_to_every_iteration():
    assert lrs.ExponentialScheduler(1.0, 0.5).get_learning_rate(3) == 0.125


@pytest.mark.parametrize("iter_steps", [[], [50], [50, 100, 150], [100, 25]])
def test_step_decay_multiplies_once_per_step_reached(iter_steps):
    it = np.array(ITERATIONS)
    reached = (it[:, None] >= np.array(iter_steps, dtype=int)[None, :]).sum(axis=1)
    np.testing.assert_allclose(rates(lrs.StepScheduler(0.1, 0.1, iter_steps)),
                               0.1 * 0.1 ** reached, rtol=1e-12)


@pytest.mark.parametrize("warmup_iter", [1, 10, 100])
def test_linear_warmup_scales_the_wrapped_schedule(warmup_iter):
    base = lrs.CosineScheduler(0.1, 1000)
    it = np.array(ITERATIONS, dtype=np.float64)
    factor = np.minimum(1.0, (it + 1) / warmup_iter)
    np.testing.assert_allclose(rates(lrs.LinearWarmupScheduler(base, warmup_iter)),
                               rates(base) * factor, rtol=1e-12)


def test_base_scheduler_must_be_overridden_and_subclasses_compose():
    with pytest.raises(NotImplementedError):
        lrs.BaseLearningRateScheduler().get_learning_rate(0)

    class Constant(lrs.BaseLearningRateScheduler):
        def get_learning_rate(self, iter):
            return 0.4

    assert lrs.LinearWarmupScheduler(Constant(), 4).get_learning_rate(0) == pytest.approx(0.1)


@pytest.mark.parametrize("cls,parameters", [
    (lrs.PolynomialScheduler, "init_lr, max_iter, power"),
    (lrs.CosineScheduler, "init_lr, max_iter"),
    (lrs.ExponentialScheduler, "init_lr, gamma, iter_interval=1"),
    (lrs.StepScheduler, "init_lr, gamma, iter_steps"),
    (lrs.LinearWarmupScheduler, "scheduler, warmup_iter"),
])
def test_constructor_arguments_are_nnablas(cls, parameters):
    assert str(inspect.signature(cls)) == f"({parameters})"
    assert list(inspect.signature(cls.get_learning_rate).parameters) == ["self", "iter"]


def test_docstring_examples_run():
    assert doctest.testmod(lrs).failed == 0
