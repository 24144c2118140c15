"""nn.grad inputs, matmul operands, recompute scopes, array preference, NdArray forms."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def test_grad_gives_zeros_of_the_input_shape_where_the_output_does_not_depend():
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32), need_grad=True)
    unused = nn.Variable((4,), need_grad=True)
    frozen = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32), need_grad=False)
    gx, gu, gf = nn.grad([F.sum(x * 3 + frozen)], {"x": x, "u": unused, "f": frozen}.values())
    for g in (gx, gu, gf):
        g.forward()
    np.testing.assert_array_equal(gx.d, np.full((2, 3), 3))
    assert gu.d.shape == (4,) and not gu.d.any()      # nnabla 1.39 gives shape () here
    assert gf.d.shape == (2, 3) and not gf.d.any()


@pytest.mark.parametrize("bad", [3, [nn.Variable(())], "x"])
def test_grad_rejects_inputs_that_are_not_variables(bad):
    y = F.sum(nn.Variable((2,), need_grad=True))
    with pytest.raises(TypeError, match="nn.grad: argument 'inputs'"):
        nn.grad([y], bad if not isinstance(bad, list) else [bad])


@pytest.mark.parametrize("left, right", [((), (3,)), ((3,), ()), ((), ())])
def test_matmul_of_a_0d_operand_raises_naming_it(left, right):
    a, b = nn.NdArray(left), nn.NdArray(right)
    with pytest.raises(ValueError, match="0-dimensional") as info:
        a @ b
    assert isinstance(info.value, AssertionError)        # nnabla raises AssertionError


def test_matmul_with_numpy_operand_raises():
    with pytest.raises(ValueError, match="nnabla.Variable or nnabla.NdArray"):
        np.ones(3, np.float32) @ nn.NdArray((3,))


def test_recompute_scopes_nest_and_restore():
    x = nn.Variable((2,))
    with nn.recompute():
        a = F.sin(x)
        with nn.recompute(False):
            b = F.sin(a)
        c = F.sin(b)
    d = F.sin(c)
    assert [v.recompute for v in (a, b, c, d)] == [True, False, True, False]

    @nn.recompute_fn()
    def block(v):
        return F.relu(v)
    assert block(x).recompute and not F.relu(x).recompute


def test_recomputed_data_is_rebuilt_for_backward():
    x = nn.Variable.from_numpy_array(np.linspace(-1, 1, 6).reshape(2, 3), need_grad=True)
    with nn.recompute():
        h = F.sin(x)
    y = F.sum(h * h)
    y.forward(clear_no_need_grad=True)
    x.grad.zero()
    y.backward(clear_buffer=True)
    np.testing.assert_allclose(x.g, 2 * np.sin(x.d) * np.cos(x.d), rtol=1e-5)


def test_array_preference_orders_cached_classes_and_resets():
    try:
        nn.prefer_cached_array(False)
        assert nn.array_classes() == ["CpuArray", "CpuCachedArray"]
        nn.prefer_cached_array(True)
        assert nn.array_classes() == ["CpuCachedArray", "CpuArray"]
        nn.reset_array_preference()
        assert nn.array_classes() == ["CpuCachedArray", "CpuArray"]     # declared order
        import nnabla_ext.cpu
        assert nnabla_ext.cpu.get_device_count() == 1
        assert nnabla_ext.cpu.array_classes() == nn.array_classes()
    finally:
        nn.prefer_cached_array(True)


@pytest.mark.parametrize("args, shape", [((), ()), ((3,), (3,)), ((2, 3), (2, 3)),
                                         (([2, 3],), (2, 3)), ((np.int64(4),), (4,))])
def test_ndarray_constructor_forms(args, shape):
    assert nn.NdArray(*args).shape == shape


@pytest.mark.parametrize("args, error", [((2.5,), TypeError), (((2, -1),), ValueError),
                                         (("ab",), TypeError)])
def test_ndarray_constructor_rejects_bad_shapes(args, error):
    with pytest.raises(error, match="nn.NdArray"):
        nn.NdArray(*args)


def test_fill_after_clear_is_a_write():
    a = nn.NdArray((2,))
    a.clear()
    assert a.clear_called
    a.fill(3)
    assert not a.clear_called
    a.clear()
    a.zero()
    assert not a.clear_called


def test_copy_from_takes_the_source_type():
    src = nn.NdArray.from_numpy_array(np.arange(3, dtype=np.uint8))
    dst = nn.NdArray((3,))
    dst.copy_from(src, use_current_context=False)
    assert dst.dtype == np.uint8
    np.testing.assert_array_equal(dst.data, [0, 1, 2])


def test_number_of_references_counts_variables_sharing_the_data():
    x = nn.Variable((2, 3))
    assert x.get_number_of_references == 1
    _ = x.data
    alias = x
    assert alias.get_number_of_references == 1
    unlinked = x.get_unlinked_variable()
    assert x.get_number_of_references == 2
    other = nn.Variable((2, 3))
    other.data = x.data
    assert unlinked.get_number_of_references == 3
    del unlinked, other
    assert x.get_number_of_references == 1


def test_dtype_is_decided_by_the_first_read_or_write_as_in_nnabla():
    """nnabla 1.39: created, zeroed, filled or lazily assigned arrays have no dtype yet;
    a read or a write decides it, and clear() keeps it."""
    for make in (lambda a: None, lambda a: a.zero(), lambda a: a.fill(3),
                 lambda a: setattr(a, "data", 1)):
        a = nn.NdArray((2,))
        make(a)
        with pytest.raises(RuntimeError, match="NdArray.dtype"):
            a.dtype
    a = nn.NdArray((2,))
    a.fill(3)
    a.get_data("r")
    assert a.dtype == np.float32
    a.clear()
    assert a.dtype == np.float32
    a = nn.NdArray((2,))
    a.cast(np.int32)
    a.clear()
    assert a.dtype == np.int32
    a = nn.NdArray((2,))
    a.data = 2 ** 60                  # not exact in float64: stored as int64
    assert a.dtype == np.int64 and a.data[0] == 2 ** 60
    with pytest.raises(RuntimeError):
        nn.Variable((2,)).data.dtype


def test_variables_and_ndarrays_have_no_len_and_are_always_true():
    # nnabla 1.39 defines no __len__: `if v:` holds for any Variable, even 0-d or empty
    for shape in [(), (0,), (3, 2)]:
        assert bool(nn.Variable(shape)) and bool(nn.NdArray(shape))
    with pytest.raises(TypeError):
        len(nn.Variable((3,)))
