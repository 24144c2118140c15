"""The reduction adapters of ``nnabla.functions`` (``F.sum(x, axis, keepdims)``, ...)."""
import inspect

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F

X = np.random.RandomState(0).permutation(24).reshape(2, 3, 4).astype(np.float32)


def _nd(a):
    return nn.NdArray.from_numpy_array(np.asarray(a, np.float32))


@pytest.mark.parametrize("name, sig", [
    ("sum", "(x, axis=None, keepdims=False)"),
    ("mean", "(x, axis=None, keepdims=False)"),
    ("max", "(x, axis=None, keepdims=False, with_index=False, only_index=False)"),
    ("min", "(x, axis=None, keepdims=False, with_index=False, only_index=False)"),
    ("prod", "(x, axis=None, keepdims=False)"),
    ("norm", "(x, p=None, axis=None, keepdims=False)"),
    ("reduce", "(x, op='sum')"),
])
def test_reduction_adapters_have_nnabla_signatures(name, sig):
    assert str(inspect.signature(getattr(F, name))) == sig


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), ([0, 2], True), (-1, True)])
def test_sum_mean_prod_match_numpy(axis, keepdims):
    ax = tuple(axis) if isinstance(axis, list) else axis
    for f, ref in ((F.sum, np.sum), (F.mean, np.mean), (F.prod, np.prod)):
        y = f(_nd(X / 10), axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(y.data, ref(X / 10, axis=ax, keepdims=keepdims), rtol=1e-5)


def test_max_min_return_uint64_indices():
    y, i = F.max(_nd(X), axis=[0, 2], with_index=True)
    np.testing.assert_array_equal(y.data, X.max(axis=(0, 2)))
    assert i.data.dtype == np.uint64
    np.testing.assert_array_equal(i.data, X.transpose(1, 0, 2).reshape(3, -1).argmax(axis=1))
    i = F.min(_nd(X), axis=1, only_index=True)
    assert i.data.dtype == np.uint64 and i.shape == (2, 4)
    np.testing.assert_array_equal(i.data, X.argmin(axis=1))


def test_max_backward_routes_gradient_to_the_argmax():
    x = nn.Variable.from_numpy_array(X, need_grad=True)
    y = F.max(x, axis=1)
    y.forward()
    y.backward()
    expected = (X == X.max(axis=1, keepdims=True)).astype(np.float32)
    np.testing.assert_array_equal(x.g, expected)


def test_norm_defaults_to_two_and_reduces_every_axis():
    np.testing.assert_allclose(F.norm(_nd(X)).data, np.sqrt((X ** 2).sum()), rtol=1e-5)
    np.testing.assert_allclose(F.norm(_nd(X), p=1, axis=2).data, np.abs(X).sum(axis=2))


def test_reduce_is_deprecated_whole_array_sum_or_mean():
    with pytest.warns(DeprecationWarning):
        y = F.reduce(_nd(X), op="mean")
    assert y.shape == () and np.isclose(float(y.data), X.mean())
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="'op'"):
        F.reduce(_nd(X), op="max")
