"""nnabla's BatchNormalizationBackward and FusedBatchNormalizationBackward: their forward
is the engine's first-order gradient, their graph backward matches central differences."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.backward_function.batch_normalization import BatchNormalizationBackward
from nnabla.backward_function.fused_batch_normalization import FusedBatchNormalizationBackward

SHAPE, STAT = (3, 2, 4), (1, 2, 1)


def _var(rng, shape, need_grad=True, scale=1.0, shift=0.0):
    data = (rng.randn(*shape) * scale + shift).astype(np.float32)
    return nn.Variable.from_numpy_array(data, need_grad=need_grad)


def _bn_inputs(rng):
    x, beta, gamma = _var(rng, SHAPE, scale=2.0), _var(rng, STAT), _var(rng, STAT)
    mean = _var(rng, STAT, need_grad=False)
    variance = nn.Variable.from_numpy_array(np.float32(1 + rng.rand(*STAT)))
    return x, beta, gamma, mean, variance


def _engine_grads(y, dy, wrt):
    y.forward()
    for v in wrt:
        v.grad.zero()
    y.backward(dy.d)
    return [v.g.copy() for v in wrt]


def _matches_central_differences(objective, grads, wrt, eps=1e-2):
    nn.forward_all([objective] + grads)
    rng = np.random.RandomState(3)
    for v, g in zip(wrt, grads):
        direction = rng.randn(*v.shape)
        base = v.d.copy()
        values = []
        for sign in (1, -1):
            v.d = base + sign * eps * direction
            objective.forward()
            values.append(float(objective.d))
        v.d = base
        numeric = (values[0] - values[1]) / (2 * eps)
        # float32 graph, step 1e-2: the observed error is <= 4e-5 (truncation and rounding).
        np.testing.assert_allclose((g.d * direction).sum(), numeric, rtol=5e-4, atol=5e-4)


def _weighted_sum(ys, seed=5):
    rng = np.random.RandomState(seed)
    terms = [F.sum(y * nn.Variable.from_numpy_array(np.float32(rng.randn(*y.shape))))
             for y in ys]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


@pytest.mark.parametrize("batch_stat", [True, False])
@pytest.mark.parametrize("no_params", [False, True])
def test_batch_normalization_backward_computes_the_engine_gradient(batch_stat, no_params):
    rng = np.random.RandomState(0)
    x, beta, gamma, mean, variance = _bn_inputs(rng)
    params = [] if no_params else [beta, gamma]
    given = [x] + params + [mean, variance]
    y = F.batch_normalization(x, None if no_params else beta, None if no_params else gamma,
                              mean, variance, axes=[1], batch_stat=batch_stat)
    dy = _var(rng, SHAPE)
    stats = mean.d.copy(), variance.d.copy()
    df = BatchNormalizationBackward(nn.Context(), [1], 0.9, 1e-5, batch_stat,
                                    no_scale=no_params, no_bias=no_params)
    outs = df(dy, *given)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    nn.forward_all(outs)
    np.testing.assert_array_equal(mean.d, stats[0])        # forward left them alone
    for got, expected in zip(outs, _engine_grads(y, dy, [x] + params)):
        np.testing.assert_allclose(got.d, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("batch_stat", [True, False])
def test_batch_normalization_backward_differentiates_to_the_third_order(batch_stat):
    rng = np.random.RandomState(1)
    x, beta, gamma, mean, variance = _bn_inputs(rng)
    dy = _var(rng, SHAPE)
    df = BatchNormalizationBackward(nn.Context(), [1], 0.9, 1e-5, batch_stat)
    objective = _weighted_sum(df(dy, x, beta, gamma, mean, variance))
    wrt = [dy, x, gamma]
    _matches_central_differences(objective, nn.grad([objective], wrt), wrt)


def _fused_inputs(rng, add):
    x, beta, gamma, mean, variance = _bn_inputs(rng)
    z = _var(rng, SHAPE) if add else None
    y = F.fused_batch_normalization(x, beta, gamma, mean, variance, z, axes=[1])
    return [x, beta, gamma, mean, variance], z, y


@pytest.mark.parametrize("add", [False, True])
def test_fused_batch_normalization_backward_computes_the_engine_gradient(add):
    rng = np.random.RandomState(2)
    inputs, z, y = _fused_inputs(rng, add)
    dy = _var(rng, SHAPE)
    wrt = inputs[:3] + ([z] if add else [])
    expected = _engine_grads(y, dy, wrt)
    df = FusedBatchNormalizationBackward(nn.Context(), [1])
    df.is_add = add
    outs = df(dy, *inputs, y, *([z] if add else []))
    nn.forward_all(list(outs))
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got.d, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("add", [False, True])
def test_fused_batch_normalization_backward_differentiates_to_the_third_order(add):
    rng = np.random.RandomState(4)
    inputs, z, y = _fused_inputs(rng, add)
    y.forward()
    y_value = nn.Variable.from_numpy_array(y.d.copy())       # the mask's source, held fixed
    dy = _var(rng, SHAPE)
    df = FusedBatchNormalizationBackward(nn.Context(), [1])
    df.is_add = add
    objective = _weighted_sum(df(dy, *inputs, y_value, *([z] if add else [])))
    wrt = [dy, inputs[0], inputs[2]]
    _matches_central_differences(objective, nn.grad([objective], wrt), wrt)
