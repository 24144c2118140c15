"""The hand-written ``F.*`` array wrappers and ``Variable``/``NdArray`` indexing."""
import inspect
import pathlib

import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from nnabla._adapters import array as adapters

TSV = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_signatures.tsv"


def _var(a, need_grad=True):
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def _nd(a):
    return nn.NdArray.from_numpy_array(np.asarray(a))


@pytest.mark.conformance
@pytest.mark.parametrize("name", adapters.__all__)
def test_adapter_signature_equals_nnabla(name):
    rows = [line.split("\t") for line in TSV.read_text().splitlines()]
    expected = {r[1]: r[2] for r in rows if len(r) == 3 and r[0] == "nnabla.functions"}
    assert str(inspect.signature(getattr(F, name))) == expected[name]


def test_concatenate_and_stack_default_axes():
    a, b = _nd(np.ones((2, 3), np.float32)), _nd(np.zeros((2, 1), np.float32))
    assert F.concatenate(a, b).shape == (2, 4)
    assert F.stack(a, a).shape == (2, 2, 3)
    assert F.stack(a, a, axis=-1).shape == (2, 3, 2)


def test_split_returns_a_tuple_of_slices_whose_gradients_stack():
    x = _var(np.arange(6).reshape(2, 3))
    ys = F.split(x, axis=1)
    assert isinstance(ys, tuple) and len(ys) == 3
    total = F.add_n(*[y * float(i) for i, y in enumerate(ys)])
    total.forward()
    np.testing.assert_array_equal(ys[2].d, [2, 5])
    x.grad.zero()
    total.backward(np.ones((2,), np.float32))
    np.testing.assert_array_equal(x.g, [[0, 1, 2], [0, 1, 2]])


def test_tile_accepts_an_int():
    x = _nd(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(F.tile(x, 2).data, np.tile(np.arange(3), 2))


def test_sort_returns_one_array_or_values_and_uint64_indices():
    x = _nd(np.array([[3, 1, 2]], np.float32))
    np.testing.assert_array_equal(F.sort(x).data, [[1, 2, 3]])
    y, i = F.sort(x, reverse=True, with_index=True)
    np.testing.assert_array_equal(y.data, [[3, 2, 1]])
    assert i.data.dtype == np.uint64 and i.data.tolist() == [[0, 2, 1]]


def test_gather_nd_takes_python_lists_of_indices():
    x = _nd(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert F.gather_nd(x, [[1, 0], [2, -1]]).data.tolist() == [5.0, 2.0]


def test_scatter_nd_needs_exactly_one_of_shape_and_out():
    data = _nd(np.array([7, 8], np.float32))
    with pytest.raises(TypeError, match="one of"):
        F.scatter_nd(data, [[0, 3]])
    with pytest.raises(TypeError, match="only one"):
        F.scatter_nd(data, [[0, 3]], shape=(5,), out=_nd(np.zeros(5, np.float32)))
    assert F.scatter_nd(data, [[0, 3]], shape=(5,)).data.tolist() == [7, 0, 0, 8, 0]


def test_scatter_nd_with_out_writes_in_place():
    out = _nd(np.ones(5, np.float32))
    y = F.scatter_nd(_nd(np.array([7, 8], np.float32)), [[0, 3]], out=out)
    assert y.data.tolist() == [7, 1, 1, 8, 1] and out.data.tolist() == [7, 1, 1, 8, 1]


def test_scatter_add_defaults_to_axis_0():
    x0 = _nd(np.zeros((3, 2), np.float32))
    y = F.scatter_add(x0, np.array([[2, 0]]), _nd(np.ones((1, 2), np.float32)))
    np.testing.assert_array_equal(y.data, [[0, 1], [0, 0], [1, 0]])


def test_meshgrid_uses_xy_indexing_by_default():
    a, b = _nd(np.arange(2, dtype=np.float32)), _nd(np.arange(3, dtype=np.float32))
    assert [g.shape for g in F.meshgrid(a, b)] == [(3, 2), (3, 2)]
    assert [g.shape for g in F.meshgrid(a, b, ij_indexing=True)] == [(2, 3), (2, 3)]


KEYS = [0, -1, (0, 1), (slice(None), None), (Ellipsis, slice(None, 2), slice(None, 2)),
        slice(None, None, -1), Ellipsis, (), (None, Ellipsis, None), (0, 0, 0),
        (slice(None), slice(None), slice(None, None, -2)), (slice(None), slice(3, None, -2), -1),
        slice(1, 1), (slice(-10, 10), np.int64(2)), [1, 0], np.array([True, False])]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_variable_indexing_matches_numpy_forward_and_backward(key):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = _var(data)
    y = x[key]
    y.forward()
    np.testing.assert_array_equal(y.d, data[key])
    x.grad.zero()
    y.backward(np.ones(y.shape, np.float32))
    expected = np.zeros_like(data)
    np.add.at(expected, key if not isinstance(key, list) else np.asarray(key), 1)
    np.testing.assert_array_equal(x.g, expected)


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_ndarray_indexing_matches_numpy(key):
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(_nd(data)[key].data, data[key])


def test_basic_indexing_builds_slice_then_reshape():
    x = _var(np.zeros((2, 3, 4)))
    assert x[..., :2].parent.info.type_name == "Slice"
    y = x[0, :, None]
    assert y.parent.info.type_name == "Reshape" and y.shape == (3, 1, 4)


@pytest.mark.parametrize("key, error", [
    (2, IndexError), ((0, 0, 0, 0), IndexError), ((Ellipsis, 0, Ellipsis), IndexError),
    ((slice(None), -4), IndexError), ("a", TypeError), (1.5, TypeError),
])
def test_bad_indices_raise(key, error):
    with pytest.raises(error):
        _var(np.zeros((2, 3, 4)))[key]
