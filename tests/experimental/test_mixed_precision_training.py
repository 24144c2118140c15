"""Tests of nnabla.experimental.mixed_precision_training.DynamicLossScalingUpdater: training
in type_config='half' with dynamic loss scaling, and the scale's rules."""
import doctest

import numpy as np
import pytest

import nnabla as nn
import nnabla.experimental.mixed_precision_training as mpt
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.ext_utils import get_extension_context


@pytest.fixture(autouse=True)
def fresh_state():
    context = nn.get_current_context()
    nn.clear_parameters()
    yield
    nn.set_default_context(context)
    nn.clear_parameters()


def regression_problem(rng, n=32):
    x = rng.randn(n, 4).astype(np.float32)
    return x, (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25)


def test_half_training_with_dynamic_loss_scaling_reduces_loss_and_scale():
    nn.set_default_context(get_extension_context("cpu", type_config="half"))
    nn.seed(0)      # the initial weights: the result must not depend on earlier tests
    rng = np.random.RandomState(0)
    x_data, t_data = regression_problem(rng)
    x, t = nn.Variable(x_data.shape), nn.Variable(t_data.shape)
    loss = F.mean(F.squared_error(PF.affine(x, 1, name="fc"), t))
    solver = S.Sgd(0.05)
    solver.set_parameters(nn.get_parameters())

    def feed():
        x.d, t.d = x_data, t_data

    # 2**24 times a loss of ~10 overflows half precision (max 65504)
    updater = mpt.DynamicLossScalingUpdater(solver, loss, feed, scale=2.0 ** 24, N=5)
    feed()
    loss.forward()
    first = float(loss.d)
    for _ in range(150):
        updater.update()
    loss.forward()
    assert updater.scale < 2.0 ** 24
    assert float(loss.d) < 0.05 * first
    w = nn.get_parameters()["fc/affine/W"].d.reshape(-1)
    np.testing.assert_allclose(w, [1.0, -2.0, 0.5, 3.0], atol=0.1)


def test_scale_grows_after_n_clean_updates_and_matches_plain_sgd():
    rng = np.random.RandomState(1)
    x_data, t_data = regression_problem(rng, 8)
    x = nn.Variable.from_numpy_array(x_data)
    t = nn.Variable.from_numpy_array(t_data)
    loss = F.mean(F.squared_error(PF.affine(x, 1, name="fc"), t))
    w = nn.get_parameters()["fc/affine/W"]
    w0 = w.d.copy()
    solver = S.Sgd(0.1)
    solver.set_parameters(nn.get_parameters())
    updater = mpt.DynamicLossScalingUpdater(solver, loss, scale=4.0, scaling_factor=2.0, N=2)
    updater.update()
    # one unscaled SGD step in numpy: d/dw mean((xw + b - t)^2)
    b = 0.0
    grad = 2 * x_data.T @ (x_data @ w0 + b - t_data) / len(x_data)
    np.testing.assert_allclose(w.d, w0 - 0.1 * grad, rtol=1e-4, atol=1e-6)
    for _ in range(3):
        updater.update()
    assert updater.scale == 8.0


def test_docstring_example_runs():
    assert doctest.testmod(mpt).failed == 0
