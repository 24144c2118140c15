"""nnabla semantics of the extra array functions that the Case table cannot express."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def _var(a, need_grad=False):
    return nn.Variable.from_numpy_array(np.asarray(a), need_grad=need_grad)


def _backward(y, dy, *xs):
    for x in xs:
        x.grad.zero()
    y.forward()
    y.backward(dy)


def test_top_k_data_without_reduce_passes_the_whole_gradient_as_nnabla():
    x = _var([[3., -5., 1., 2.]], need_grad=True)
    y = F.top_k_data(x, 2, reduce=False)
    _backward(y, np.array([[1., 2., 3., 4.]], np.float32), x)
    np.testing.assert_array_equal(y.d, [[3., 0., 0., 2.]])
    np.testing.assert_array_equal(x.g, [[1., 2., 3., 4.]])


def test_top_k_data_indices_are_uint64_positions_in_the_flattened_sample():
    x = _var(np.array([[[1., 9.], [7., 3.]]], np.float32))
    y, index = F.top_k_data(x, 3, with_index=True)
    F.sink(y, index).forward()
    assert index.d.dtype == np.uint64
    np.testing.assert_array_equal(index.d, [[1, 2, 3]])
    np.testing.assert_array_equal(y.d, [[9., 7., 3.]])


@pytest.mark.parametrize("abs_", [False, True])
def test_top_k_grad_keeps_the_k_largest_gradients(abs_):
    x = _var([[3., -5., 1., 2.]], need_grad=True)
    y = F.top_k_grad(x, 2, abs=abs_)
    _backward(y, np.array([[1., -4., 3., 0.5]], np.float32), x)
    np.testing.assert_array_equal(y.d, x.d)
    expected = [[0., -4., 3., 0.]] if abs_ else [[1., 0., 3., 0.]]
    np.testing.assert_array_equal(x.g, expected)


def test_batch_cholesky_gradient_is_the_symmetrised_numerical_gradient():
    rng = np.random.RandomState(0)
    a = rng.randn(2, 3, 3)
    a = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    dy = rng.randn(2, 3, 3)
    for upper in (False, True):
        x = _var(a.astype(np.float32), need_grad=True)
        y = F.batch_cholesky(x, upper=upper)
        _backward(y, dy.astype(np.float32), x)

        def objective(m, upper=upper):
            low = np.linalg.cholesky(m)
            return float(((low.transpose(0, 2, 1) if upper else low) * dy).sum())
        numeric = np.zeros_like(a)
        for idx in np.ndindex(*a.shape):
            step = np.zeros_like(a)
            step[idx] = 1e-5
            numeric[idx] = (objective(a + step) - objective(a - step)) / 2e-5
        symmetric = 0.5 * (numeric + numeric.transpose(0, 2, 1))
        np.testing.assert_allclose(x.g, symmetric, atol=1e-3, rtol=1e-3)


def test_nonzero_and_unique_have_nnablas_index_dtypes_and_data_sized_shapes():
    x = _var(np.array([[3., 0., 3.], [0., 2., 2.]], np.float32))
    z = F.nonzero(x)
    assert z.shape == (2, 4)                      # sized from x's data at build, as nnabla
    z.forward()
    assert z.shape == (2, 4) and z.d.dtype == np.uint64
    with nn.auto_forward():
        y, index, inverse, counts = F.unique(x, with_index=True, with_inverse=True,
                                             with_counts=True)
    np.testing.assert_array_equal(y.d, [0., 2., 3.])
    assert index.d.dtype == inverse.d.dtype == counts.d.dtype == np.int32
    np.testing.assert_array_equal(inverse.d, [2, 0, 2, 0, 1, 1])


def test_sort_only_index_returns_uint64_indices():
    x = _var(np.array([[3., 1., 2.]], np.float32))
    i = F.sort(x, only_index=True)
    i.forward()
    assert i.d.dtype == np.uint64
    np.testing.assert_array_equal(i.d, [[1, 2, 0]])


def test_backward_from_a_later_output_sees_zero_gradients_of_data_sized_outputs():
    x = _var(np.arange(12, dtype=np.float32).reshape(4, 3), need_grad=True)
    packed, batch_sizes = F.pack_padded_sequence(x, _var(np.array([4, 2, 1])))
    F.sink(packed, batch_sizes).forward()
    assert packed.shape == (7,) and batch_sizes.d.tolist() == [3, 2, 1, 1]
    x.grad.zero()
    batch_sizes.backward(np.ones(4, np.float32))
    np.testing.assert_array_equal(x.g, 0)


def test_pack_then_pad_round_trips_and_pads_to_total_length():
    rng = np.random.RandomState(1)
    padded = rng.randn(3, 4, 2).astype(np.float32)             # batch first: B=3, T=4
    lengths = np.array([4, 3, 1])
    with nn.auto_forward():
        packed, batch_sizes = F.pack_padded_sequence(_var(padded), _var(lengths), True)
        back, out_lengths = F.pad_packed_sequence(packed, batch_sizes, batch_first=True,
                                                  total_length=6)
    assert back.shape == (3, 6, 2)
    np.testing.assert_array_equal(out_lengths.d, lengths)
    for b, n in enumerate(lengths):
        np.testing.assert_array_equal(back.d[b, :n], padded[b, :n])
        np.testing.assert_array_equal(back.d[b, n:], 0)


def test_bool_scatter_into_output_writes_in_place_and_routes_gradients():
    mask = _var(np.array([1, 0, 1]))
    rows = _var(np.array([[1., 2.], [5., 6.]], np.float32), need_grad=True)
    out = _var(np.full((3, 2), 9., np.float32), need_grad=True)
    y = F.bool_scatter(rows, mask, out)
    _backward(y, np.arange(6, dtype=np.float32).reshape(3, 2), rows, out)
    np.testing.assert_array_equal(out.d, [[1., 2.], [9., 9.], [5., 6.]])
    np.testing.assert_array_equal(y.d, out.d)
    np.testing.assert_array_equal(rows.g, [[0., 1.], [4., 5.]])
    np.testing.assert_array_equal(out.g, [[0., 0.], [2., 3.], [0., 0.]])


def test_einsum_takes_operands_positionally_and_the_equation_by_keyword():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = F.einsum(nn.NdArray.from_numpy_array(a), nn.NdArray.from_numpy_array(b),
                 equation="ij,jk->ik")
    np.testing.assert_allclose(y.data, a @ b)
