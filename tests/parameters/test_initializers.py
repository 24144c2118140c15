"""Initializers: values, dtypes, shapes and the random stream they draw from."""

import nnabla as nn
import nnabla.initializer as I
import numpy as np
import pytest


def _is_orthogonal(x):
    rows, cols = x.shape[0], int(np.prod(x.shape[1:]))
    flat = x.reshape(rows, cols).astype(np.float64)
    gram = flat.T @ flat if rows > cols else flat @ flat.T
    return np.allclose(gram, np.eye(min(rows, cols)), atol=1e-5)


def test_uniform_initializer_reproduces_numpy_uniform_with_same_seed():
    x = I.UniformInitializer((-0.3, 0.7), rng=np.random.RandomState(7))((4, 5))
    ref = np.random.RandomState(7).uniform(-0.3, 0.7, size=(4, 5)).astype(np.float32)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, ref)


def test_uniform_initializer_accepts_a_list_shape():
    x = I.UniformInitializer(rng=np.random.RandomState(0))([3, 2])
    assert x.shape == (3, 2)


def test_normal_initializer_reproduces_numpy_randn_scaled_by_sigma():
    x = I.NormalInitializer(2.5, rng=np.random.RandomState(3))((6, 2))
    ref = (np.random.RandomState(3).randn(6, 2) * 2.5).astype(np.float32)
    np.testing.assert_array_equal(x, ref)


def test_uniform_int_initializer_stays_in_half_open_range():
    x = I.UniformIntInitializer((-2, 3), rng=np.random.RandomState(1))((1000,))
    assert np.issubdtype(x.dtype, np.integer)
    assert x.min() == -2 and x.max() == 2


def test_constant_initializer_fills_float32_value():
    x = I.ConstantInitializer(-2)((2, 3))
    assert x.dtype == np.float32 and np.all(x == -2)


def test_constant_initializer_supports_scalar_shape():
    x = I.ConstantInitializer(0.25)(())
    assert x.shape == () and float(x) == 0.25


def test_range_initializer_counts_along_last_axis():
    x = I.RangeInitializer(start=2, step=3)((2, 4))
    np.testing.assert_array_equal(x, [[2, 5, 8, 11], [2, 5, 8, 11]])
    x[0, 0] = 0  # the result is an ordinary writable array, not a broadcast view


@pytest.mark.parametrize("shape", [(10,), (10, 8), (3, 20), (2, 3, 4, 2, 3, 4)])
def test_orthogonal_initializer_gives_orthonormal_rows_or_columns(shape):
    x = I.OrthogonalInitializer(rng=np.random.RandomState(313))(shape)
    assert x.shape == shape and x.dtype == np.float32
    if len(shape) > 1:
        assert _is_orthogonal(x)


def test_orthogonal_initializer_scales_by_gain():
    one = I.OrthogonalInitializer(1.0, rng=np.random.RandomState(0))((4, 6))
    two = I.OrthogonalInitializer(2.0, rng=np.random.RandomState(0))((4, 6))
    np.testing.assert_allclose(two, 2 * one, rtol=1e-6)


def test_glorot_uniform_limit_matches_formula():
    low, high = I.calc_uniform_lim_glorot(16, 32, (3, 3))
    assert high == pytest.approx(np.sqrt(6 / (9 * 48))) and low == -high


def test_normal_std_helpers_match_formulas():
    assert I.calc_normal_std_he_forward(4, 8, (3, 3)) == pytest.approx(np.sqrt(2 / 36))
    assert I.calc_normal_std_he_backward(4, 8, (3, 3)) == pytest.approx(np.sqrt(2 / 72))
    assert I.calc_normal_std_glorot(4, 8, (3, 3)) == pytest.approx(np.sqrt(2 / 108))


def test_base_initializer_call_names_the_missing_override():
    with pytest.raises(NotImplementedError, match="BaseInitializer"):
        I.BaseInitializer()((2,))


def test_reprs_show_the_configuration():
    assert repr(I.UniformInitializer((-1, 2))) == "UniformInitializer((-1, 2))"
    assert repr(I.NormalInitializer(0.5)) == "NormalInitializer(0.5)"
    assert repr(I.ConstantInitializer(3)) == "ConstantInitializer(3)"


def test_default_initializers_follow_the_global_parameter_seed():
    initializer = I.UniformInitializer((-1, 1))  # built before seeding: still follows it
    nn.seed(123)
    first = initializer((3, 4))
    second = I.NormalInitializer()((2,))
    ref = np.random.RandomState(123)
    np.testing.assert_array_equal(first, ref.uniform(-1, 1, (3, 4)).astype(np.float32))
    np.testing.assert_array_equal(second, ref.randn(2).astype(np.float32))


def test_weight_normalization_scale_is_norm_over_other_axes():
    w_data = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
    w = nn.Variable.from_numpy_array(w_data)
    scale = I.WeightNormalizationScaleInitializer(w, dim=1, eps=1e-12)((3,))
    ref = np.sqrt((w_data.astype(np.float64) ** 2).sum(axis=(0, 2)) + 1e-12)
    np.testing.assert_allclose(scale, ref, rtol=1e-5)
