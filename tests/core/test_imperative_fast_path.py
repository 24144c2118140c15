"""The generated F.* wrappers' imperative fast path reuses a recorded runner only for the
same function, input shapes, argument values and context."""
import numpy as np
import nnabla as nn
import nnabla.functions as F
from nnabla import _dispatch
from nnabla.ext_utils import get_extension_context


def nd(a):
    return nn.NdArray.from_numpy_array(np.asarray(a, dtype=np.float32))


def test_repeated_calls_follow_arguments_and_shapes():
    _dispatch.imperative_runners.clear()
    x = nd(np.arange(6).reshape(2, 3))
    for _ in range(3):                     # the second and third calls take the fast path
        np.testing.assert_array_equal(F.pow_scalar(x, 2.0).data, np.arange(6).reshape(2, 3) ** 2)
        np.testing.assert_array_equal(F.pow_scalar(x, 3.0).data, np.arange(6).reshape(2, 3) ** 3)
        y = nd(np.arange(4))
        np.testing.assert_array_equal(F.add_scalar(y, 1.5).data, np.arange(4) + 1.5)
    assert any(k[0] == "PowScalar" for k in _dispatch.imperative_runners)


def test_unhashable_arguments_take_the_general_path():
    x = nd(np.arange(6).reshape(2, 3))
    for axes in ([1, 0], (1, 0), [1, 0]):
        np.testing.assert_array_equal(F.transpose(x, axes).data, np.arange(6).reshape(2, 3).T)


def test_keywords_in_another_order_are_not_recorded():
    _dispatch.imperative_runners.clear()
    x = nd([0.5, 2.0, 5.0])
    # call_function receives the arguments in the caller's order; recording them would
    # file (max, min) values under the wrapper's (min, max) key
    _dispatch.call_function("LeakyReLU", x, inplace=False, alpha=0.5)
    assert not any(k[0] == "LeakyReLU" for k in _dispatch.imperative_runners)
    np.testing.assert_allclose(F.leaky_relu(nd([-2.0]), 0.25).data, [-0.5])


def test_a_context_change_is_a_different_key():
    x = nd([1.0, 2.0])
    assert F.add_scalar(x, 1.0).data.dtype == np.float32
    with nn.context_scope(get_extension_context("cpu", type_config="half")):
        y = F.add_scalar(x, 1.0)
        y = F.add_scalar(x, 1.0)
    assert y.data.dtype == np.float16
    np.testing.assert_array_equal(y.data, [2.0, 3.0])
    assert F.add_scalar(x, 1.0).data.dtype == np.float32
