"""NdArray.narrow / NdArray.view / Variable.reshape share memory with the original, and
auto-forward releases an intermediate when its last handle goes (nnabla 1.39's rules).

References are numpy slices of the same operations.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def test_narrowed_arrays_write_through_to_their_root_as_numpy_slices_do():
    a = nn.NdArray((10, 3))
    a.fill(1)
    want = np.ones((10, 3), np.float32)
    b, c = a.narrow(0, 0, 4), a.narrow(0, 6, 4)
    d = c.narrow(0, 1, 2)
    b.fill(5)
    want[0:4] = 5
    c.fill(7)
    want[6:10] = 7
    d.fill(9)
    want[7:9] = 9
    b += c
    want[0:4] += want[6:10]
    np.testing.assert_array_equal(a.data, want)
    np.testing.assert_array_equal(b.data, want[0:4])
    np.testing.assert_array_equal(d.data, want[7:9])
    b.data[1, 2] = -1           # .data of a narrowed array is a view of the root
    assert a.data[1, 2] == -1


def test_a_function_writing_into_a_narrowed_output_fills_only_its_rows():
    x = nn.NdArray.from_numpy_array(np.full(2, 3, np.float32))
    b = nn.NdArray((4,))
    b.fill(5)
    F.identity(x, outputs=[b.narrow(0, 1, 2)])
    np.testing.assert_array_equal(b.data, [5, 3, 3, 5])


@pytest.mark.parametrize("dim, start, length", [(1, 0, 2), (0, -11, 2), (0, 2, -1),
                                                (0, 8, 3), (0, 10, 0)])
def test_narrow_rejects_out_of_range_arguments(dim, start, length):
    with pytest.raises(RuntimeError, match="NdArray.narrow: argument"):
        nn.NdArray((10, 5)).narrow(dim, start, length)


def test_narrowed_arrays_of_one_array_may_not_overlap():
    a = nn.NdArray(10)
    keep = a.narrow(0, 2, 2)
    for start, length in [(0, 3), (2, 2), (3, 2)]:
        with pytest.raises(RuntimeError, match="overlap"):
            a.narrow(0, start, length)
    a.narrow(0, 4, 2)           # beside it
    del keep
    a.narrow(0, 2, 2)           # the old one is gone


def test_a_narrowed_array_keeps_its_roots_type_and_cannot_be_cleared():
    a = nn.NdArray.from_numpy_array(np.zeros((4, 2)))     # float64
    b = a.narrow(0, 0, 2)
    assert b.dtype == np.float64
    np.testing.assert_array_equal(b.get_data("r", dtype=np.float16), np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        b.cast(np.float32)
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        b.get_data("rw", dtype=np.float16)
    with pytest.raises(RuntimeError, match="cannot be cleared"):
        b.clear()
    a.cast(np.float16)          # the root may change type: its windows follow
    assert b.dtype == np.float16


def test_zeroing_holds_until_a_write_and_reads_keep_it():
    a = nn.NdArray(3)
    assert not a.zeroing
    a.zero()
    a.get_data("r")
    assert a.zeroing
    a.data
    assert not a.zeroing
    b = a.narrow(0, 0, 1)
    b.zero()
    b.get_data("r")
    assert b.zeroing
    b.fill(2)
    assert not b.zeroing
    np.testing.assert_array_equal(a.data, [2, 0, 0])


def test_view_shares_memory_in_another_shape():
    a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32))
    v = a.view((2, 3))
    v.data[1] = 0
    np.testing.assert_array_equal(a.data, [0, 1, 2, 0, 0, 0])
    with pytest.raises(ValueError, match="NdArray.view"):
        a.view((4,))


def test_variable_reshape_shares_data_with_the_original():
    v = nn.Variable.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    with nn.auto_forward():
        h = F.identity(v)
        r = h.reshape((3, 2))
    h.d = 1
    np.testing.assert_array_equal(r.d, np.ones((3, 2)))
    r.d[0, 0] = 5
    assert h.d[0, 0] == 5
    u = h.reshape((6,), unlink=True)
    assert u.parent is None
    u.g = np.arange(6)
    np.testing.assert_array_equal(h.g, np.arange(6).reshape(2, 3))


def test_static_reshape_gradient_flows_and_data_is_shared():
    x = nn.Variable.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3),
                                     need_grad=True)
    h = x * 2
    y = F.sum(h.reshape((3, 2)) ** 2)
    y.forward()
    x.grad.zero()
    y.backward()
    np.testing.assert_allclose(x.g, 8 * x.d)       # d/dx sum((2x)^2)


def test_auto_forward_clears_an_intermediate_no_backward_reads_when_its_handle_goes():
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32), need_grad=True)
    with nn.auto_forward():
        h = F.add_scalar(x, 1)        # add_scalar's backward reads nothing
        t = F.tanh(x)                 # tanh's backward reads its output
        h_data, t_data = h.data, t.data
        y = F.add2(h, t)
        del h, t
    assert h_data.clear_called and not t_data.clear_called
    np.testing.assert_allclose(y.d, 2 + np.tanh(1), rtol=1e-6)


def test_an_unlinked_variable_keeps_the_shared_data_alive():
    x = nn.Variable.from_numpy_array(np.ones(3, np.float32))
    with nn.auto_forward():
        h = F.add_scalar(x, 1)
        keep = h.get_unlinked_variable()
        data = h.data
        del h
    assert not data.clear_called
    np.testing.assert_array_equal(keep.d, [2, 2, 2])


def test_releasing_a_narrowed_array_through_a_handle_is_recorded_as_an_error():
    nn.Variable.EXCEPTIONS_AT_DEALLOC.clear()
    x = nn.Variable.from_numpy_array(np.ones(3, np.float32))
    with nn.auto_forward():
        h = x + 1
        base = nn.NdArray((6,))
        h.data = base.narrow(0, 0, 3).view(h.shape)
        h = h + 1
    with pytest.raises(RuntimeError, match="narrow"):
        nn.Variable._check_exception_at_dealloc()
    nn.Variable._check_exception_at_dealloc()      # reported once


def test_copy_from_a_lazily_filled_source_takes_the_context_type():
    src = nn.NdArray((2, 3))
    src.cast(np.uint8)
    dst = nn.NdArray((2, 3))
    dst.copy_from(src)
    assert dst.dtype == np.uint8
    src.zero()
    dst.copy_from(src, use_current_context=True)
    assert dst.dtype == np.float32
    np.testing.assert_array_equal(dst.data, np.zeros((2, 3)))


def test_an_in_place_f_reshape_shares_data_and_counts_as_a_reference():
    x = nn.Variable((2, 3))
    assert x.get_number_of_references == 1
    y = F.reshape(x, (3, 2))                   # inplace=True by default
    assert x.get_number_of_references == 2 and y.get_number_of_references == 2
    x.d = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(y.d, np.arange(6).reshape(3, 2))
    z = F.reshape(x, (6,), inplace=False)
    assert z.get_number_of_references == 1
    u = x.get_unlinked_variable()
    assert u.get_number_of_references == 3


def test_a_graph_with_an_in_place_reshape_follows_a_new_batch_size():
    x = nn.Variable((2, 3), need_grad=True)
    y = F.sum(F.reshape(F.mul_scalar(x, 2.0), (-1,)) ** 2)
    x.d = 1
    y.forward()
    assert y.d == 24                                   # 6 elements of (2 * 1) ** 2
    x.reset_shape((4, 3), force=True)
    x.d = 1
    y.forward()
    assert y.d == 48
    x.grad.zero()
    y.backward()
    np.testing.assert_array_equal(x.g, np.full((4, 3), 8))    # d/dx (2x)^2 = 8x
