"""nn.grad where a parameter is used twice and a backward is built from a composition.

Batch normalization's backward function differentiates its composition (mean, variance,
scale, shift) with an inner ``nn.grad``; that inner gradient is the partial derivative
w.r.t. the function's own inputs. The reference is float64 central differences of a numpy
batch normalization.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF

EPS = 1e-5


def _bn(x, beta, gamma):
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta


def _loss(x, beta, gamma, weight):
    return float((weight * _bn(np.tanh(_bn(x, beta, gamma)), beta, gamma)).sum())


def _central_differences(x, beta, gamma, weight, which, step=1e-6):
    params = {"beta": beta, "gamma": gamma}
    target = params[which]
    grad = np.zeros_like(target)
    for i in np.ndindex(target.shape):
        saved = target[i]
        target[i] = saved + step
        up = _loss(x, params["beta"], params["gamma"], weight)
        target[i] = saved - step
        down = _loss(x, params["beta"], params["gamma"], weight)
        target[i] = saved
        grad[i] = (up - down) / (2 * step)
    return grad


@pytest.mark.parametrize("auto_forward", [False, True])
def test_grad_of_batch_normalization_parameters_used_twice_is_the_total_derivative(
        auto_forward):
    rng = np.random.RandomState(3)
    xv = rng.randn(4, 3, 5).astype(np.float32)
    weight = rng.randn(4, 3, 5).astype(np.float32)
    nn.clear_parameters()
    try:
        PF.batch_normalization(nn.Variable(xv.shape), name="shared")  # creates the parameters
        params = nn.get_parameters(grad_only=True)
        rng_params = np.random.RandomState(4)
        for p in params.values():
            p.d = 1 + 0.5 * rng_params.randn(*p.shape)
        with nn.auto_forward(auto_forward):
            x = nn.Variable.from_numpy_array(xv)
            h = PF.batch_normalization(x, name="shared")
            y = PF.batch_normalization(F.tanh(h), name="shared")
            loss = F.sum(y * nn.Variable.from_numpy_array(weight))
            grads = nn.grad([loss], params.values())
            if not auto_forward:
                F.sink(*grads, one_input_grad=1).forward()
        beta = params["shared/bn/beta"].d.astype(np.float64)
        gamma = params["shared/bn/gamma"].d.astype(np.float64)
        for name, g in zip(params, grads):
            which = name.rsplit("/", 1)[1]
            want = _central_differences(xv.astype(np.float64), beta.copy(), gamma.copy(),
                                        weight.astype(np.float64), which)
            np.testing.assert_allclose(g.d, want, rtol=1e-4, atol=1e-4, err_msg=name)
    finally:
        nn.clear_parameters()


def test_grad_and_backward_agree_when_batch_normalization_parameters_are_shared():
    rng = np.random.RandomState(5)
    nn.clear_parameters()
    try:
        x = nn.Variable.from_numpy_array(rng.randn(2, 3, 4, 4))
        h = PF.convolution(x, 3, (3, 3), pad=(1, 1), name="c")
        h = PF.batch_normalization(h, name="c")
        h = PF.convolution(F.relu(h), 3, (3, 3), pad=(1, 1), name="c")
        h = PF.batch_normalization(h, name="c")
        loss = F.mean(h ** 2)
        params = nn.get_parameters(grad_only=True)
        loss.forward()
        for p in params.values():
            p.grad.zero()
        loss.backward()
        grads = nn.grad([loss], params.values())
        F.sink(*grads, one_input_grad=1).forward()
        for (name, p), g in zip(params.items(), grads):
            np.testing.assert_allclose(g.d, p.g, rtol=1e-5, atol=1e-6, err_msg=name)
    finally:
        nn.clear_parameters()
