"""The emulation is as strict as CuPy where CuPy is strict, so code that passes on it does
not call host numpy on device arrays."""
import numpy as np
import pytest
from nnabla_ext.cuda import _cupy_api
from nnabla_ext.cuda.emulation import cupy as cp


def test_device_arrays_refuse_implicit_numpy_conversion():
    a = cp.arange(4, dtype=cp.float32)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(a)
    np.testing.assert_array_equal(a.get(), [0, 1, 2, 3])
    np.testing.assert_array_equal(cp.asnumpy(a * 2), [0, 2, 4, 6])


def test_mixing_device_and_host_arrays_raises_like_cupy():
    a, host = cp.ones(3, dtype=cp.float32), np.ones(3, np.float32)
    for op in (lambda: a + host, lambda: host + a, lambda: cp.maximum(a, host),
               lambda: cp.where(host > 0, a, 0)):
        with pytest.raises(TypeError, match="Unsupported type"):
            op()
    assert float((a + np.float32(2)).sum()) == 9.0      # numpy scalars are fine


def test_numpy_functions_dispatch_to_cupy_on_device_arrays():
    a = cp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    total = np.sum(a)                                   # __array_function__, as CuPy
    assert isinstance(total, cp.ndarray) and float(total) == 10.0
    assert isinstance(np.exp(a), cp.ndarray)            # __array_ufunc__


def test_only_the_recorded_cupy_names_exist():
    assert "errstate" not in _cupy_api.NAMES
    with pytest.raises(AttributeError, match="errstate"):
        cp.errstate
    assert cp.linalg.inv is not None and cp.fft.rfft is not None
    with pytest.raises(AttributeError):
        cp.ones(2).getfield                             # a numpy method CuPy lacks


def test_reductions_and_scalar_indexing_return_zero_dim_device_arrays():
    a = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    for value in (a.sum(), a.max(), a[1, 2], cp.sum(a)):
        assert isinstance(value, cp.ndarray) and value.shape == ()
    assert int(a[1, 2]) == 5 and bool(a.max() > 4)


def test_in_place_operators_and_indexed_updates_stay_on_the_device():
    a = cp.zeros((2, 3), dtype=cp.float32)
    a += 1
    a[0] = np.array([1, 2, 3], np.float32)              # host values may be assigned
    a[1, cp.asarray(np.array([0, 2]))] = 5
    cp.add.at(a, (0, cp.asarray(np.array([1, 1]))), 1.0)
    np.testing.assert_array_equal(a.get(), [[1, 4, 3], [5, 1, 5]])


def test_views_share_memory_and_the_family_owner_sees_it():
    from nnabla_ext.cuda._family import _emulated_owner
    a = cp.zeros((4, 4), dtype=cp.float32)
    v = a[1:3]
    v[...] = 1
    assert float(a.sum()) == 8.0
    assert _emulated_owner(v) is _emulated_owner(a)
    assert _emulated_owner(cp.zeros(2)) is not _emulated_owner(a)
