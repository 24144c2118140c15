"""NdArray and Variable members as documented in the reference."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def test_new_arrays_read_as_zeros_and_fill_is_lazy():
    a = nn.NdArray((2, 3))
    np.testing.assert_array_equal(a.data, 0)
    a.fill(2.5)
    assert not a._array.heads
    np.testing.assert_array_equal(a.data, 2.5)
    a.zero()
    assert a.zeroing
    np.testing.assert_array_equal(a.data, 0)
    assert not a.zeroing


def test_data_is_a_reference_and_assignment_copies():
    v = nn.Variable((3,))
    d = v.d
    d[1] = 4.0
    np.testing.assert_array_equal(v.d, [0, 4, 0])
    src = np.array([1.0, 2.0, 3.0], np.float32)
    v.d = src
    src[0] = 100
    assert v.d[0] == 1.0


def test_integer_assignment_switches_the_dtype_like_nnabla():
    v = nn.Variable((2,))
    v.d = np.array([1, 2])
    assert v.d.dtype == np.int64
    assert v.data.dtype == np.int64


def test_cast_get_data_modification_count_and_clear():
    a = nn.NdArray.from_numpy_array(np.arange(4.0))
    count = a.modification_count
    assert a.cast(np.float16).dtype == np.float16
    assert a.modification_count > count
    assert a.get_data("r", np.int32).dtype == np.int32
    with pytest.raises(ValueError, match="mode"):
        a.get_data("x")
    assert not a.clear_called
    a.clear()
    assert a.clear_called


def test_copy_from_checks_shapes_and_copies_values():
    a = nn.NdArray((2,))
    a.copy_from(nn.NdArray.from_numpy_array(np.array([3.0, 4.0])))
    np.testing.assert_array_equal(a.data, [3, 4])
    with pytest.raises(ValueError, match=r"shape \(3,\); expected \(2,\)"):
        a.copy_from(nn.NdArray((3,)))
    with pytest.raises(TypeError, match="NdArray"):
        a.copy_from(np.zeros(2))


def test_size_from_axis_strides_ndim_size():
    a = nn.NdArray([10, 9])
    assert (a.size_from_axis(), a.size_from_axis(0), a.size_from_axis(1),
            a.size_from_axis(2)) == (90, 90, 9, 1)
    assert a.strides == (9, 1) and a.ndim == 2 and a.size == 90
    v = nn.Variable([10, 9])
    assert v.size_from_axis(1) == 9 and v.ndim == 2 and v.size == 90


def test_ndarray_operators_run_immediately_and_inplace_ones_write_back():
    a = nn.NdArray.from_numpy_array(np.array([1.0, 2.0]))
    b = nn.NdArray.from_numpy_array(np.array([3.0, 5.0]))
    np.testing.assert_allclose((a + b).data, [4, 7])
    np.testing.assert_allclose((a - 1).data, [0, 1])
    np.testing.assert_allclose((2 - a).data, [1, 0])
    np.testing.assert_allclose((a * b / 2).data, [1.5, 5])
    np.testing.assert_allclose((2 / a).data, [2, 1])
    np.testing.assert_allclose((a ** 2).data, [1, 4])
    np.testing.assert_allclose((2 ** a).data, [2, 4])
    np.testing.assert_allclose((-a).data, [-1, -2])
    assert +a is a
    same = a
    a += b
    assert a is same
    np.testing.assert_allclose(a.data, [4, 7])


def test_variable_operators_build_the_documented_functions():
    x = nn.Variable((2,))
    assert (x - 1).parent.info.type_name == "AddScalar"
    assert (x - 1).parent.info.args["val"] == -1
    assert (x / 2).parent.info.type_name == "MulScalar"
    assert (x / 2).parent.info.args["val"] == 0.5
    assert (-x).parent.info.args["val"] == -1
    assert (1 - x).parent.info.type_name == "RSubScalar"
    assert (x + x).parent.info.type_name == "Add2"


def test_variable_equality_and_hash_are_identity_based():
    x = nn.Variable((2,))
    y = nn.Variable((2,))
    assert x != y and x == x
    assert len({x, y, x}) == 2
    u = x.get_unlinked_variable()
    assert u == x and hash(u) == hash(x)


def test_getitem_slices_like_the_tutorials():
    x = nn.Variable.from_numpy_array(np.arange(2 * 3 * 6 * 6, dtype=np.float32)
                                     .reshape(2, 3, 6, 6))
    y = x[..., :4, :4]
    y.forward()
    np.testing.assert_array_equal(y.d, x.d[..., :4, :4])
    a = nn.NdArray.from_numpy_array(np.arange(10.0))
    np.testing.assert_array_equal(a[2:8:2].data, np.arange(10.0)[2:8:2])


def test_apply_info_reshape_and_from_numpy_array():
    v = nn.Variable.from_numpy_array(np.ones((2, 3)), need_grad=True)
    assert v.need_grad and v.shape == (2, 3)
    assert v.apply(persistent=True, name="v") is v and v.persistent and v.name == "v"
    r = v.reshape((3, 2))
    r.forward()
    assert r.shape == (3, 2)
    u = v.reshape((6,), unlink=True)
    assert u.parent is None and u.shape == (6,)
    assert v.info.shape == (2, 3)


def test_reset_shape_requires_force_for_a_new_size():
    v = nn.Variable((2, 3))
    v.reset_shape((3, 2))
    assert v.shape == (3, 2)
    with pytest.raises(ValueError, match="force=True"):
        v.reset_shape((4, 4))
    v.reset_shape((4, 4), force=True)
    assert v.d.shape == (4, 4)


def test_bad_inputs_to_functions_name_the_function_and_argument():
    with pytest.raises(TypeError, match=r"F.add_scalar: input 'x' is of type ndarray"):
        F.add_scalar(np.ones(2), 1)
    with pytest.raises(TypeError, match=r"F.add_scalar: argument 'val'"):
        F.add_scalar(nn.Variable((2,)), "one")
    with pytest.raises(ValueError, match=r"F.add2: argument 'x1' has shape"):
        F.add2(nn.Variable((2, 3)), nn.Variable((2, 4)))
    with pytest.raises(TypeError, match="unexpected keyword argument .vall."):
        F.add_scalar(nn.Variable((2,)), vall=1)
    with pytest.raises(ValueError, match="negative"):
        nn.Variable((2, -1))


def test_contexts_scope_and_default():
    ctx = nn.Context(["cpu:half"], "CpuCachedArray", "0")
    assert nn.get_current_context().backend == ["cpu:float"]
    with nn.context_scope(ctx):
        assert nn.get_current_context() == ctx
        y = F.add_scalar(nn.Variable.from_numpy_array(np.ones(2)), 1)
        y.forward()
        assert y.d.dtype == np.float16
    assert nn.get_current_context() != ctx
    with pytest.raises(TypeError, match="Context"):
        nn.set_default_context("cpu")
