"""Quantization layers: bad input raises from shape inference; straight-through gradients
and in-place updates follow nnabla's rules (what a Case table cannot express)."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from kernel_harness import make_kernel
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla.testing.function_cases import cases_quantization


def _infer(name, in_shapes, **kwargs):
    spec = SPECS[name]
    return infer(spec, in_shapes, bind_args(spec, kwargs))


def _case(name, id=""):
    return next(c for c in cases_quantization.CASES if c.name == name and c.id == id)


def test_binary_layers_check_the_binary_weight_and_alpha_shapes():
    with pytest.raises(ValueError, match="argument 'binary_weight'"):
        _infer("BinaryConnectAffine", [(2, 12), (12, 5), (12, 4), None])
    with pytest.raises(ValueError, match="argument 'alpha'"):
        _infer("BinaryWeightAffine", [(2, 12), (12, 5), (12, 5), (4,), None])
    with pytest.raises(ValueError, match="argument 'weight'"):
        _infer("BinaryConnectConvolution", [(2, 4, 7, 6), (6, 3, 3, 2), (6, 3, 3, 2), None])


def test_quantizers_reject_bad_arguments():
    with pytest.raises(ValueError, match="argument 'n'"):
        _infer("Pow2Quantize", [(2, 3)], n=2)
    with pytest.raises(ValueError, match="argument 'delta'"):
        _infer("FixedPointQuantize", [(2, 3)], delta=0.0)
    with pytest.raises(ValueError, match="argument 'rate'"):
        _infer("Prune", [(2, 3)], rate=1.5)
    with pytest.raises(ValueError, match="argument 'round_mode'"):
        _infer("QuantizeLinear", [(2, 3), (1, 1), (1, 1)], round_mode="UP")
    with pytest.raises(ValueError, match="argument 'selection_algorithm'"):
        _infer("INQAffine", [(2, 4), (4, 3), (4, 3), None], selection_algorithm="all")
    with pytest.raises(ValueError, match="argument 'qr_min'"):
        _infer("MinMaxQuantize", [(4, 3), (1, 2), (1, 2), (1, 2), (1, 2)])
    with pytest.raises(ValueError, match="'dtype'"):
        F.quantize_linear(nn.Variable((2, 3)), nn.Variable((1, 1)), nn.Variable((1, 1)),
                          dtype=np.int32)


@pytest.mark.parametrize("name, rule", [
    ("BinarySigmoid", lambda x, dy: dy * (np.abs(x) < 1) / 2),
    ("BinaryTanh", lambda x, dy: dy * (np.abs(x) < 1)),
    ("Prune", lambda x, dy: dy),
    ("FixedPointQuantize", lambda x, dy: dy * (np.abs(x) <= 127 * 0.0625)),
    ("Pow2Quantize", lambda x, dy: dy * (2.0 ** np.round(np.log2(np.abs(x))) <= 2)),
])
def test_straight_through_gradients_follow_nnabla(name, rule):
    case = _case(name)
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    kernel.forward(xs)
    dy = np.random.RandomState(1).randn(*xs[0].shape)
    (dx,) = kernel.backward(xs, [None], [dy], [True])
    np.testing.assert_allclose(dx, rule(xs[0], dy))


def test_binary_affine_gives_the_binary_weight_gradient_to_weight_and_stores_signs():
    case = _case("BinaryWeightAffine")
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    kernel.forward(xs)
    x, w, wb, alpha = xs[:4]
    np.testing.assert_array_equal(wb, np.sign(w))
    np.testing.assert_allclose(alpha, np.abs(w).mean(axis=0))
    dy = np.random.RandomState(1).randn(2, 5)
    dx, dw = kernel.backward(xs, [None], [dy], [True] * 5)[:2]
    np.testing.assert_allclose(dw, x.reshape(2, -1).T @ dy)
    np.testing.assert_allclose(dx, (dy @ (np.sign(w) * alpha).T).reshape(x.shape))


def test_inq_fixes_half_of_the_learnable_weights_then_all_and_keeps_fixed_ones():
    rng = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rng.randn(2, 8).astype(np.float32))
    w = nn.Variable.from_numpy_array(rng.randn(8, 4).astype(np.float32), need_grad=True)
    ind = nn.Variable.from_numpy_array(np.zeros((8, 4), np.int64))
    y = F.inq_affine(x, w, ind, inq_iterations=(0, 2), num_bits=4)
    y.forward()
    assert ind.d.sum() == 16
    fixed = w.d[ind.d == 1]
    np.testing.assert_array_equal(np.abs(fixed), 2.0 ** np.round(np.log2(np.abs(fixed))))
    w.d = w.d + 0.01 * (ind.d == 1)          # a solver step must not move fixed weights
    y.forward()
    np.testing.assert_array_equal(w.d[ind.d == 1], fixed)
    y.forward()
    assert ind.d.sum() == 32


def test_min_max_quantize_follows_x_and_trains_the_range_without_ema():
    case = _case("MinMaxQuantize", "x-min-max")
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    kernel.forward(xs)
    np.testing.assert_allclose(xs[1], xs[0].min(axis=(0, 2), keepdims=True))
    case = _case("MinMaxQuantize")
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    kernel.forward(xs)
    dy = np.ones_like(xs[0])
    dx, dmin, dmax = kernel.backward(xs, [None], [dy], [True, True, True, False, False])[:3]
    inside = (xs[0] >= kernel.lo) & (xs[0] <= kernel.hi)
    np.testing.assert_array_equal(dx, inside)
    np.testing.assert_allclose(dmin, (xs[0] < kernel.lo).sum(axis=(0, 2), keepdims=True))
    np.testing.assert_allclose(dmax, (xs[0] > kernel.hi).sum(axis=(0, 2), keepdims=True))


def test_quantize_linear_rounds_the_zero_point_in_place_and_divides_the_gradient():
    x = nn.Variable.from_numpy_array(np.zeros((1, 3), np.float32), need_grad=True)
    s = nn.Variable.from_numpy_array(np.full((1, 1), 2.0, np.float32))
    z = nn.Variable.from_numpy_array(np.array([[-2.5]], np.float32))
    y = F.quantize_linear(x, s, z, dtype=np.uint8)
    y.forward()
    assert z.d.tolist() == [[0.0]]
    y.backward(np.ones((1, 3), np.float32))
    np.testing.assert_allclose(x.g, 0.5)


def test_quantize_false_returns_the_input_itself():
    x = nn.Variable((2, 3))
    assert F.fixed_point_quantize(x, quantize=False) is x
    assert F.pow2_quantize(x, quantize=False) is x
