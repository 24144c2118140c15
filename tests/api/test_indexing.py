"""Variable/NdArray indexing against numpy's own indexing (reads, writes, gradients)."""
import numpy as np
import pytest

import nnabla as nn

KEYS = [
    (1, slice(None)), slice(None, None, -1), (Ellipsis, 2), (None, 0),
    [1, 3, 0], ([1, 3], [2, 0]), (np.array([1, 2]), None, np.array([3, 0])),
    (None, [1, 2], [0, 4]), "mask", ("mask", None),
    (slice(1, 3), [0, 4]),            # arrays beside a slice: beyond nnabla, as numpy
    (1, [2, 3]), (-1, np.array([[0, 1], [2, 3]])),
]


def _key(key, x):
    """The key with the placeholder "mask" replaced by a boolean mask of ``x``."""
    if isinstance(key, str):
        return x > 0.5
    if isinstance(key, tuple):
        return tuple(x > 0.5 if isinstance(k, str) else k for k in key)
    return key


@pytest.mark.parametrize("cls", [nn.NdArray, nn.Variable])
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_reading_matches_numpy(cls, key):
    x = np.random.RandomState(0).rand(4, 5).astype(np.float32)
    with nn.auto_forward():
        y = cls.from_numpy_array(x)[_key(key, x)]
    got = y.data if isinstance(y, nn.NdArray) else y.d
    np.testing.assert_array_equal(got, x[_key(key, x)])


@pytest.mark.parametrize("cls", [nn.NdArray, nn.Variable])
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_writing_matches_numpy(cls, key):
    x = np.random.RandomState(1).rand(4, 5).astype(np.float32)
    k = _key(key, x)
    value = np.random.RandomState(2).rand(*x[k].shape).astype(np.float32)
    a = cls.from_numpy_array(x)
    with nn.auto_forward():
        a[k] = value
    x[k] = value
    np.testing.assert_array_equal(a.data if cls is nn.NdArray else a.d, x)


def test_written_values_and_the_rest_get_their_gradients():
    x = nn.Variable.from_numpy_array(np.ones((3, 4), np.float32), need_grad=True)
    u = nn.Variable.from_numpy_array(np.full((2,), 5, np.float32), need_grad=True)
    y = x * 2
    y[1, [0, 3]] = u
    z = y * y
    z.forward()
    x.grad.zero()
    u.grad.zero()
    z.backward(np.ones((3, 4), np.float32))
    want_x = np.full((3, 4), 8, np.float32)          # d(4x^2)/dx at x=1
    want_x[1, [0, 3]] = 0
    np.testing.assert_array_equal(z.d[1, [0, 3]], [25, 25])
    np.testing.assert_array_equal(x.g, want_x)
    np.testing.assert_array_equal(u.g, [10, 10])


def test_index_variable_values_are_read_at_forward_time():
    x = np.arange(10, dtype=np.float32)
    i = nn.Variable.from_numpy_array(np.array([1, 2]))
    y = nn.Variable.from_numpy_array(x)[i]
    y.forward()
    np.testing.assert_array_equal(y.d, [1, 2])
    i.d = np.array([7, 0])
    y.forward()
    np.testing.assert_array_equal(y.d, [7, 0])


def test_boolean_variable_mask_keeps_its_type_and_selects():
    x = np.arange(5, dtype=np.float32)
    m = nn.Variable.from_numpy_array(x > 2)
    assert m.d.dtype == np.bool_
    with nn.auto_forward():
        np.testing.assert_array_equal(nn.Variable.from_numpy_array(x)[m].d, [3, 4])


@pytest.mark.parametrize("key, error", [
    ([0, 9], IndexError), ((0, 0, 0), IndexError), ("a", TypeError),
    (([0, 1], [0, 1, 2]), IndexError)], ids=repr)
def test_bad_keys_raise(key, error):
    x = nn.NdArray.from_numpy_array(np.zeros((3, 4), np.float32))
    with pytest.raises(error):
        x[key]


# The Slice arguments nnabla 1.39 records for a basic key (given bounds kept as given,
# absent ones the step's ends); values as nnabla 1.39 prints them.
SLICE_ARGUMENTS = [
    ((slice(None, None, -1), slice(None, -6, -1)), ([-1, -1], [-11, -6], [-1, -1])),
    ((slice(-3, None), slice(2, -1)), ([-3, 2], [10, -1], [1, 1])),
    ((slice(5, None, -1), slice(None, None, -3)), ([5, -1], [-11, -11], [-1, -3])),
    ((-1, slice(None, 5)), ([9, 0], [10, 5], [1, 1])),
]


@pytest.mark.parametrize("key, want", SLICE_ARGUMENTS, ids=repr)
def test_basic_keys_record_nnabla_slice_arguments_and_read_as_numpy(key, want):
    a = np.arange(100, dtype=np.float32).reshape(10, 10)
    x = nn.Variable.from_numpy_array(a)
    y = x[key]
    f = y.parent if y.parent.info.type_name == "Slice" else y.parent.inputs[0].parent
    assert f.arguments == dict(zip(("start", "stop", "step"), want))
    y.forward()
    np.testing.assert_array_equal(y.d, a[key])


def test_out_of_range_slice_bounds_clip_as_numpy():
    # Deliberate difference: nnabla 1.39 pads out-of-range bounds with zeros (x[-20:20]
    # of 10 elements has 20); here they clip as in numpy and Python.
    a = np.arange(10, dtype=np.float32)
    x = nn.Variable.from_numpy_array(a)
    for key in (slice(-20, 20), slice(20, -20, -1), slice(-20, 20, 3)):
        y = x[key]
        assert y.parent.arguments["start"] == [key.start]
        y.forward()
        np.testing.assert_array_equal(y.d, a[key])
