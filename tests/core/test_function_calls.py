"""Function's explicit-call API as nnabla's testers use it: accum default, recompute, masks."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def _var(values):
    return nn.Variable.from_numpy_array(np.asarray(values, np.float32)).apply(need_grad=True)


def test_backward_without_accum_flags_accumulates_like_nnabla():
    x = _var([1.0, 2.0])
    y = F.mul_scalar(x, 3.0)
    y.forward()
    y.g = 1.0
    x.g = 1.0
    y.parent.backward([x], [y])
    np.testing.assert_allclose(x.g, [4.0, 4.0])


def test_recompute_of_a_stochastic_function_replays_its_draws():
    x = _var(np.ones((4, 5)))
    y = F.dropout(x, 0.5, seed=1)
    f = y.parent
    assert f.need_setup_recompute(0)
    f.setup_recompute([x], [y])
    f.forward([x], [y])
    expected = y.d.copy()
    y.data.zero()
    f.recompute([x], [y])
    np.testing.assert_array_equal(y.d, expected)


def test_recompute_of_a_deterministic_function_is_its_forward():
    x = _var([1.0, -2.0])
    y = F.relu(x)
    assert not y.parent.need_setup_recompute(0)
    y.parent.recompute([x], [y])
    np.testing.assert_allclose(y.d, [1.0, 0.0])


def test_inactive_inputs_are_left_out_of_forward_and_backward():
    xs = [_var([i + 1.0, i + 1.0]) for i in range(3)]
    y = F.mul_n(*xs)
    y.parent.set_active_input_mask([True, False, True])
    y.forward()
    np.testing.assert_allclose(y.d, [3.0, 3.0])
    for x in xs:
        x.grad.zero()
    y.backward(np.ones(2, np.float32))
    np.testing.assert_allclose([x.g[0] for x in xs], [3.0, 0.0, 1.0])
    y.parent.set_active_input_mask([True, True, True])
    y.forward()
    np.testing.assert_allclose(y.d, [6.0, 6.0])


def test_active_input_mask_of_the_wrong_length_is_refused():
    y = F.add_n(_var([1.0]), _var([2.0]))
    with pytest.raises(ValueError, match="set_active_input_mask.*3 flags.*2"):
        y.parent.set_active_input_mask([True, True, True])


def test_explicit_calls_take_only_the_present_inputs_and_follow_new_shapes():
    rng = np.random.RandomState(0)
    x, w = _var(rng.randn(2, 3)), _var(rng.randn(3, 4))
    y = F.affine(x, w)                    # no bias: the calls list [x, w], as in nnabla
    f = y.parent
    f.setup([x, w], [y])
    f.forward([x, w], [y])
    np.testing.assert_allclose(y.d, x.d @ w.d, rtol=1e-5)
    y.g = 1.0
    x.grad.zero()
    f.backward([x, w], [y], [False, False])
    np.testing.assert_allclose(x.g, np.ones((2, 4)) @ w.d.T, rtol=1e-5)
    bigger = _var(rng.randn(5, 3))
    f.setup([bigger, w], [y])             # the kernel is rebound to the new shapes
    f.forward([bigger, w], [y])
    np.testing.assert_allclose(y.d, bigger.d @ w.d, rtol=1e-5)


def test_forward_after_reset_shape_of_an_input_reshapes_the_graph():
    x = _var(np.ones((2, 3)))
    y = F.mul_scalar(F.add_scalar(x, 1.0), 2.0)
    y.forward()
    x.reset_shape((4, 5), force=True)
    x.d = 1.0
    y.forward()
    assert y.shape == (4, 5)
    np.testing.assert_allclose(y.d, np.full((4, 5), 4.0))


def test_recompute_leaves_running_statistics_alone():
    rng = np.random.RandomState(0)
    x = _var(rng.randn(4, 3, 2))
    beta, gamma = _var(np.zeros((1, 3, 1))), _var(np.ones((1, 3, 1)))
    mean, var = _var(np.zeros((1, 3, 1))), _var(np.ones((1, 3, 1)))
    y = F.batch_normalization(x, beta, gamma, mean, var, batch_stat=True)
    inputs = [x, beta, gamma, mean, var]
    y.parent.forward(inputs, [y])
    expected, stats = y.d.copy(), mean.d.copy()
    y.parent.recompute(inputs, [y])
    np.testing.assert_allclose(y.d, expected, rtol=1e-6)
    np.testing.assert_array_equal(mean.d, stats)


def test_recompute_starts_from_the_inputs_saved_by_setup_recompute():
    rng = np.random.RandomState(1)
    w, u = _var(rng.randn(4, 3)), _var(rng.randn(4))
    y = F.spectral_norm(w, u, itr=1)
    f = y.parent
    assert f.need_setup_recompute(0)
    f.setup_recompute([w, u], [y])
    f.forward([w, u], [y])                # updates u
    expected, updated_u = y.d.copy(), u.d.copy()
    f.recompute([w, u], [y])
    np.testing.assert_allclose(y.d, expected, rtol=1e-5)
    np.testing.assert_array_equal(u.d, updated_u)


def test_accumulated_grad_of_a_0d_input_stays_a_writable_array():
    x = _var(2.0)
    y = F.mul_scalar(x, 3.0)
    y.forward()
    y.g = 1.0
    x.g = 1.0
    y.parent.backward([x], [y])
    assert isinstance(x.g, np.ndarray) and float(x.g) == 4.0
    x.g[...] = 0.0
