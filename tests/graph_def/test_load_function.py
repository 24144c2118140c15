"""nnabla.utils.load_function._create_function_instance: functions of NNP messages."""
import numpy as np
import pytest

import nnabla as nn
from nnabla.utils import nnabla_pb2
from nnabla.utils.load_function import _create_function_instance


def _affine_message():
    f = nnabla_pb2.Function(name="fc", type="Affine")
    f.affine_param.base_axis = 1
    return f


def test_a_created_function_computes_with_its_stored_arguments():
    f = nnabla_pb2.Function(name="s", type="Sum")
    f.sum_param.axes.extend([1])
    f.sum_param.keep_dims = True
    func = _create_function_instance(nn.get_current_context(), f)
    assert func.arguments == {"axes": (1,), "keep_dims": True}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = func(nn.Variable.from_numpy_array(x))
    np.testing.assert_array_equal(y.d, x.sum(axis=1, keepdims=True))


def test_absent_optional_inputs_are_left_out_as_in_nnp_files():
    func = _create_function_instance(nn.get_current_context(), _affine_message())
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    w = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    y = func(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(w),
             auto_forward=False)
    assert y.shape == (2, 4)
    y.forward()
    np.testing.assert_allclose(y.d, x @ w, rtol=1e-5)


def test_an_unknown_function_type_is_named():
    with pytest.raises(ValueError, match="'NoSuchFunction'"):
        _create_function_instance(nn.get_current_context(),
                                  nnabla_pb2.Function(name="f", type="NoSuchFunction"))
