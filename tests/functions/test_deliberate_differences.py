"""Where we knowingly differ from nnabla 1.39: README.md, section "Deliberate differences".

Each test states our behaviour and, in a comment, what nnabla 1.39.0 returned for the same call.
"""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest


def test_pad_packed_sequence_pads_with_padding_value():
    # README "Deliberate differences": nnabla 1.39 ignores padding_value and pads 0, giving
    # [[1, 4, 6, 7], [2, 5, 0, 0], [3, 0, 0, 0]] here.
    packed = nn.Variable.from_numpy_array(np.arange(1, 8, dtype=np.float32))
    batch_sizes = nn.Variable.from_numpy_array(np.array([3, 2, 1, 1]))
    padded, lengths = F.pad_packed_sequence(packed, batch_sizes, batch_first=True,
                                            padding_value=-1.0)
    nn.forward_all([padded, lengths])
    np.testing.assert_array_equal(padded.d, [[1, 4, 6, 7], [2, 5, -1, -1], [3, -1, -1, -1]])
    np.testing.assert_array_equal(lengths.d, [4, 2, 1])


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(1, 3), (3, 1)])
def test_affine_grid_puts_a_size_one_axis_at_coordinate_zero(size, align_corners):
    # README "Deliberate differences": nnabla 1.39 returns NaN for every point of these grids.
    theta = np.array([[[1, 2, 3], [4, 5, 6]]], np.float32)
    grid = F.affine_grid(nn.Variable.from_numpy_array(theta), size, align_corners=align_corners)
    grid.forward()
    h, w = size
    step = (lambda n: np.linspace(-1, 1, n)) if align_corners else \
        (lambda n: np.linspace(-1, 1, n) * (n - 1) / n)
    ys = np.zeros(1) if h == 1 else step(h)
    xs = np.zeros(1) if w == 1 else step(w)
    points = np.stack([*np.meshgrid(xs, ys), np.ones((h, w))], axis=-1)   # (h, w, 3): x, y, 1
    np.testing.assert_allclose(grid.d[0], points @ theta[0].T, rtol=1e-6)
    assert np.isfinite(grid.d).all()


def test_sort_gradient_goes_back_to_each_element_s_source_position():
    # README "Deliberate differences": nnabla 1.39 applies the inverse permutation and gives
    # [[20, 30, 10]] here; the gradient of y = x[perm] is dx[perm[i]] = dy[i].
    x = nn.Variable.from_numpy_array(np.array([[3.0, 1.0, 2.0]], np.float32), need_grad=True)
    y = F.sort(x, axis=1)
    y.forward()
    x.grad.zero()
    y.backward(np.array([[10.0, 20.0, 30.0]], np.float32))
    np.testing.assert_array_equal(y.d, [[1, 2, 3]])
    np.testing.assert_array_equal(x.g, [[30, 10, 20]])


@pytest.mark.parametrize("dim", [0, 2])
def test_spectral_norm_in_test_mode_has_the_training_mode_s_finite_gradient(dim):
    # README "Deliberate differences": nnabla 1.39 returns NaN for every element of w's
    # gradient when test=True (recorded in tests/data/nnabla_1.39_recorded_values.json,
    # row SpectralNorm-test-output-u). The forward is the same in both modes (test only
    # leaves u unwritten), and training mode's gradient matches nnabla's recorded one.
    rng = np.random.RandomState(0)
    w0, u0 = rng.randn(3, 4, 5).astype(np.float32), rng.randn((3, 4, 5)[dim]).astype(np.float32)
    results = {}
    for test in (False, True):
        w = nn.Variable.from_numpy_array(w0, need_grad=True)
        u = nn.Variable.from_numpy_array(u0.copy())
        y = F.spectral_norm(w, u, dim=dim, itr=2, test=test)
        y.forward()
        w.grad.zero()
        y.backward(np.linspace(-1, 1, y.size, dtype=np.float32).reshape(y.shape))
        results[test] = (y.d.copy(), w.g.copy(), u.d.copy())
    np.testing.assert_array_equal(results[True][0], results[False][0])
    np.testing.assert_array_equal(results[True][1], results[False][1])
    assert np.isfinite(results[True][1]).all()
    np.testing.assert_array_equal(results[True][2], u0)          # test mode leaves u alone
    assert not np.array_equal(results[False][2], u0)


def test_prod_gradient_at_a_row_s_only_zero_is_the_product_of_the_others():
    # README "Deliberate differences": nnabla 1.39 gives 0 there ([[0, 0, 0, 0], ...] here).
    x = nn.Variable.from_numpy_array(
        np.array([[0.5, 0.0, -1.5, 2.0], [1.25, -0.75, 0.0, 0.0]], np.float32), need_grad=True)
    y = F.prod(x, axis=1)
    y.forward()
    x.grad.zero()
    y.backward(np.ones(2, np.float32))
    np.testing.assert_array_equal(y.d, [0, 0])
    # Row 0: d/dx1 = 0.5 * -1.5 * 2; row 1 has two zeros, so every derivative is 0.
    np.testing.assert_allclose(x.g, [[0, -1.5, 0, 0], [0, 0, 0, 0]])


def test_batch_normalization_on_running_statistics_differentiates_them():
    # README "Deliberate differences": nnabla 1.39 gives mean and variance zero gradients
    # when batch_stat=False (and in fused_convolution's inference mode).
    rng = np.random.RandomState(0)
    arrays = [rng.randn(2, 3, 2), rng.randn(1, 3, 1), rng.randn(1, 3, 1), rng.randn(1, 3, 1),
              rng.rand(1, 3, 1) + 0.5]
    x, beta, gamma, mean, variance = [
        nn.Variable.from_numpy_array(a.astype(np.float32), need_grad=True) for a in arrays]
    y = F.batch_normalization(x, beta, gamma, mean, variance, batch_stat=False, eps=1e-5)
    y.forward()
    for v in (x, beta, gamma, mean, variance):
        v.grad.zero()
    dy = rng.randn(2, 3, 2)
    y.backward(dy.astype(np.float32))
    x64, g64, m64, v64 = (a.astype(np.float32).astype(np.float64)
                          for a in (arrays[0], arrays[2], arrays[3], arrays[4]))
    inv_std = 1 / np.sqrt(v64 + 1e-5)
    np.testing.assert_allclose(mean.g, -(dy * g64 * inv_std).sum((0, 2), keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variance.g, (dy * g64 * (x64 - m64)).sum((0, 2), keepdims=True)
                               * -0.5 * inv_std ** 3, rtol=1e-5, atol=1e-6)
