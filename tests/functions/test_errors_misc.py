"""Special-use functions: bad input raises from shape inference; graph helpers behave as
nnabla's (unlink stops gradients, sink seeds them, vat_noise writes w in backward)."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _infer(name, in_shapes, **kwargs):
    spec = SPECS[name]
    return infer(spec, in_shapes, bind_args(spec, kwargs))


@pytest.mark.parametrize("name, shapes, kwargs, fragment", [
    ("NmsDetection2d", [(2, 5, 5)], {}, "argument 'x'"),
    ("ONNXNonMaxSuppression", [(2, 5, 4), (2, 3, 4)], {}, "argument 'scores'"),
    ("ONNXNonMaxSuppression", [(2, 5, 4), (2, 3, 5)], {"center_point_box": 2},
     "center_point_box"),
    ("VATNoise", [(3, 4), (3, 5)], {}, "argument 'w'"),
    ("VATNoise", [(3, 4), (3, 4)], {"base_axis": 0}, "base_axis"),
    ("EyeLike", [(3, 4, 5)], {}, "argument 'x'"),
    ("Mod2", [(2, 3), (2, 4)], {}, "argument 'x1'"),
    ("BitShift", [(2, 3), (2, 3)], {"direction": "UP"}, "direction"),
    ("Arange", [], {"start": 0, "stop": 1, "step": 0}, "step"),
    ("Constant", [], {"shape": (2, -1)}, "shape"),
])
def test_bad_input_raises_naming_the_argument(name, shapes, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        _infer(name, shapes, **kwargs)


def test_linspace_checks_num_like_nnabla():
    with pytest.raises(TypeError):
        F.linspace(0, 10, 2.5)
    with pytest.raises(ValueError):
        F.linspace(0, 10, -1)
    assert F.linspace(0, 10, 0).shape == (0,)


def test_unlink_passes_data_and_stops_the_gradient():
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32), need_grad=True)
    y = F.unlink(x)
    x.grad.zero()
    y.forward()
    y.backward()
    np.testing.assert_array_equal(y.d, x.d)
    np.testing.assert_array_equal(x.g, 0)


def test_sink_runs_every_input_and_seeds_their_gradients_with_ones():
    v = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(2, 3).astype(np.float32),
                                     need_grad=True)
    h0, h1 = F.tanh(v), F.sigmoid(v)
    v.grad.zero()
    dummy = F.sink(h0, h1, one_input_grad=True)
    assert dummy.shape == ()
    dummy.forward()
    dummy.backward()
    s = 1 / (1 + np.exp(-v.d))
    np.testing.assert_allclose(h0.d, np.tanh(v.d), rtol=1e-6)
    np.testing.assert_allclose(v.g, (1 - np.tanh(v.d) ** 2) + s * (1 - s), rtol=1e-5)


def test_vat_noise_writes_eps_times_the_output_gradient_into_w():
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(3, 6).astype(np.float32),
                                     need_grad=True)
    w = nn.Variable((3, 6), need_grad=True)
    y = F.vat_noise(x, w, 1, 1.4)
    y.forward()
    y.backward()
    np.testing.assert_allclose(w.d, 1.4)


def test_onnx_non_max_suppression_outputs_uint64_indices_sized_by_the_data():
    rng = np.random.RandomState(0)
    b = nn.Variable.from_numpy_array(rng.rand(2, 5, 4).astype(np.float32))
    s = nn.Variable.from_numpy_array(rng.rand(2, 3, 5).astype(np.float32))
    y = F.onnx_non_max_suppression(b, s, 0, 2, 0.3, 0.4)
    y.forward()
    assert y.d.dtype == np.uint64 and y.shape == (10, 3)


def test_bit_shift_and_mod2_compute_in_the_stored_integer_type():
    import nnabla as nn
    import nnabla.functions as F
    a = nn.NdArray.from_numpy_array(np.array([200, 3], np.uint8))
    s = nn.NdArray.from_numpy_array(np.array([1, 2], np.uint8))
    y = F.bit_shift(a, s)
    assert y.data.dtype == np.uint8
    np.testing.assert_array_equal(y.data, [144, 12])         # 400 wraps around in uint8
    x = nn.NdArray.from_numpy_array(np.array([-7, 7], np.int32))
    m = nn.NdArray.from_numpy_array(np.array([3, -3], np.int32))
    np.testing.assert_array_equal(F.mod2(x, m).data, [2, -2])            # floored, like Python
    np.testing.assert_array_equal(F.mod2(x, m, fmod=True).data, [-1, 1])  # C's fmod
