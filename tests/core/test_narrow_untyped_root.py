"""A narrowed window of an array that has no type yet may choose the type (nnabla 1.39).

In nnabla, ``NdArray.narrow`` windows share their root's memory and keep its type, but a root
that was never synchronised (only created, filled or zeroed, or filled through windows: a
window's fill is lazy) takes the type of the first cast; only later casts to another type
raise. The expected values are numpy's: the same fills and casts on a float array. nnabla 1.39
passes these tests too (checked once with its interpreter).
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def test_filled_window_of_an_untyped_root_casts_the_root_to_half():
    root = nn.NdArray((5,))
    window = root.narrow(0, 2, 3)
    window.fill(0.2)
    out = window.cast(np.float16)
    assert out.dtype == np.float16 and root.dtype == np.float16
    np.testing.assert_array_equal(root.data, np.array([0, 0, 0.2, 0.2, 0.2], np.float16))


def test_other_windows_follow_the_type_the_first_cast_chose():
    root = nn.NdArray((6,))
    first, second = root.narrow(0, 0, 4), root.narrow(0, 4, 2)
    second.fill(0.4)
    second.cast(np.float16)
    first.fill(0.1)
    first.cast(np.float16)                  # the same type: allowed
    want = np.array([0.1] * 4 + [0.4] * 2, np.float16)
    np.testing.assert_array_equal(root.data, want)
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        first.cast(np.float32)              # the root has its type now


def test_untyped_root_filled_as_a_whole_is_typed_by_a_window_cast():
    root = nn.NdArray((4,))
    root.fill(3)
    window = root.narrow(0, 1, 2)
    np.testing.assert_array_equal(window.cast(np.float16), np.full(2, 3, np.float16))
    assert root.dtype == np.float16


@pytest.mark.parametrize("typed_by", ["data", "cast"])
def test_a_root_typed_before_refuses_another_type_through_its_windows(typed_by):
    root = nn.NdArray((4,))
    if typed_by == "data":
        root.data = np.zeros(4, np.float32)
    else:
        root.cast(np.float32)
    window = root.narrow(0, 0, 2)
    window.fill(1)
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        window.cast(np.float16)
    np.testing.assert_array_equal(root.data, np.array([1, 1, 0, 0], np.float32))


def test_a_window_written_by_an_explicit_cast_types_the_root():
    root = nn.NdArray((4,))
    window = root.narrow(0, 0, 2)
    window.fill(1)
    window.cast(np.float32)[...] = 2        # an explicit write: the type is decided
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        root.narrow(0, 2, 2).cast(np.float16)


def test_windows_of_a_function_output_can_be_filled():
    y = F.relu(nn.NdArray.from_numpy_array(np.ones(4, np.float32)))    # a kernel's output
    y.narrow(0, 0, 2).fill(3)
    np.testing.assert_array_equal(y.data, [3, 3, 1, 1])
    with pytest.raises(RuntimeError, match="narrowed array cannot be cast"):
        y.narrow(0, 2, 2).cast(np.float16)
