"""Gradient accumulation (``nnabla._execute.accumulate``): the first sum goes to a new
array, later sums add into it in place, as nnabla adds into the gradient's memory; arrays a
kernel returned are never written to."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla import _execute
from nnabla._array import F16, F32, SyncedArray
from nnabla.array_family import HOST


def _grad(shape=(3,), dtype=F32):
    return SyncedArray(shape, dtype)


def _summed_grad():
    """A gradient after a stored array and one sum: 2 everywhere, held in the array that
    sum made."""
    grad = _grad()
    _execute.accumulate(HOST, grad, np.ones(3, np.float32), False, F32)
    _execute.accumulate(HOST, grad, np.ones(3, np.float32), True, F32)
    return grad


def test_kernel_arrays_are_never_written():
    grad = _grad()
    first, second, third = (np.full(3, v, np.float32) for v in (1, 2, 4))
    _execute.accumulate(HOST, grad, first, False, F32)
    assert grad.get(F32) is first                   # stored as it is, no copy
    _execute.accumulate(HOST, grad, second, True, F32)
    summed = grad.get(F32)
    assert summed is not first and summed is not second
    _execute.accumulate(HOST, grad, third, True, F32)
    assert grad.get(F32) is summed                  # added in place
    np.testing.assert_array_equal(summed, [7, 7, 7])
    np.testing.assert_array_equal(first, [1, 1, 1])
    np.testing.assert_array_equal(second, [2, 2, 2])
    np.testing.assert_array_equal(third, [4, 4, 4])


def test_a_replaced_head_is_not_added_into():
    grad = _summed_grad()
    given = np.full(3, 10, np.float32)
    grad.set(given)                                 # e.g. a user's `x.g = ...`
    _execute.accumulate(HOST, grad, np.ones(3, np.float32), True, F32)
    np.testing.assert_array_equal(given, [10, 10, 10])
    np.testing.assert_array_equal(grad.get(F32), [11, 11, 11])


def test_a_second_head_stops_in_place_sums():
    grad = _summed_grad()
    summed = grad.get(F32)
    half = grad.get(F16)                            # a float16 copy others may read
    _execute.accumulate(HOST, grad, np.ones(3, np.float32), True, F32)
    np.testing.assert_array_equal(summed, [2, 2, 2])
    np.testing.assert_array_equal(half, [2, 2, 2])
    np.testing.assert_array_equal(grad.get(F32), [3, 3, 3])


def test_half_storage_sums_stay_correct():
    grad = _grad(dtype=F16)
    for k in range(4):
        _execute.accumulate(HOST, grad, np.full(3, 0.5, np.float32), k > 0, F16)
    assert grad.dtype == F16
    np.testing.assert_array_equal(grad.get(F16), [2, 2, 2])


def test_modification_count_moves_with_in_place_sums():
    grad = _summed_grad()
    before = grad.modification_count
    _execute.accumulate(HOST, grad, np.ones(3, np.float32), True, F32)
    assert grad.modification_count == before + 1


@pytest.mark.parametrize("passes", [1, 2, 3, 5])
def test_leaf_gradients_accumulate_across_backward_passes(passes):
    x = nn.Variable.from_numpy_array(np.arange(4, dtype=np.float32), need_grad=True)
    y = F.mul_scalar(x, 2.0)
    x.grad.zero()
    for _ in range(passes):
        y.forward()
        y.backward()
    np.testing.assert_array_equal(x.g, np.full(4, 2.0 * passes, np.float32))


def test_a_gradient_read_after_a_sum_follows_later_sums_as_in_nnabla():
    """nnabla adds into the gradient's memory, so an array read from ``x.g`` follows later
    passes (recorded with nnabla 1.39: 4 then 6). Here the first pass stores the kernel's
    own array, which is never written to, so this holds from the second pass on."""
    x = nn.Variable.from_numpy_array(np.ones(4, np.float32), need_grad=True)
    y = F.mul_scalar(x, 2.0)
    x.grad.zero()
    for _ in range(2):
        y.forward()
        y.backward()
    read = x.g
    np.testing.assert_array_equal(read, [4, 4, 4, 4])
    y.forward()
    y.backward()
    np.testing.assert_array_equal(x.g, [6, 6, 6, 6])
    np.testing.assert_array_equal(read, [6, 6, 6, 6])
