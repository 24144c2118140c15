"""Quantized, pruned and low-rank parametric layers: parameters, forward, seeds, backward."""

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np
import pytest

AFFINE_IN, CONV_IN = (2, 6), (2, 4, 5, 5)


def _affine(name):
    return lambda x: getattr(PF, name)(x, 3)


def _conv(name, *rank):
    return lambda x: getattr(PF, name)(x, 3, (3, 3), *rank)


def _registered():
    return {k: (tuple(v.shape), v.need_grad)
            for k, v in nn.get_parameters(grad_only=False).items()}


def _quantized_pair(scope, w_shape):
    return {f"{scope}/W": (w_shape, True), f"{scope}/W_q": (w_shape, False),
            f"{scope}/b": ((3,), True), f"{scope}/b_q": ((3,), False)}


def _min_max_ranges(scope, suffix, shape):
    prefix = f"{scope}/min_max_quantize_{suffix}/min_max_quantize"
    return {f"{prefix}/ql_min": (shape, False), f"{prefix}/ql_max": (shape, False),
            f"{prefix}/qr_min": (shape, True), f"{prefix}/qr_max": (shape, True)}


def _min_max_layer(scope, w_shape):
    w_q, b_q = f"{scope}/W_q", f"{scope}/b_q"
    pair = _quantized_pair(scope, w_shape)
    return {**{k: pair[k] for k in (f"{scope}/W", w_q)},
            **_min_max_ranges(scope, "w", (1,) * len(w_shape)),
            **{k: pair[k] for k in (f"{scope}/b", b_q)},
            **_min_max_ranges(scope, "b", (1,))}


FILTERS = (3, 4, 3, 3)
# name: (builder, input shape, registered parameters in creation order), read from nnabla 1.39
LAYERS = {
    "fixed_point_quantized_affine": (_affine("fixed_point_quantized_affine"), AFFINE_IN,
                                     _quantized_pair("fp_quantized_affine", (6, 3))),
    "fixed_point_quantized_convolution": (_conv("fixed_point_quantized_convolution"), CONV_IN,
                                          _quantized_pair("fp_quantized_conv", FILTERS)),
    "pow2_quantized_affine": (_affine("pow2_quantized_affine"), AFFINE_IN,
                              _quantized_pair("pow2_quantized_affine", (6, 3))),
    "pow2_quantized_convolution": (_conv("pow2_quantized_convolution"), CONV_IN,
                                   _quantized_pair("pow2_quantized_conv", FILTERS)),
    "pruned_affine": (_affine("pruned_affine"), AFFINE_IN,
                      _quantized_pair("pruned_affine", (6, 3))),
    "pruned_convolution": (_conv("pruned_convolution"), CONV_IN,
                           _quantized_pair("pruned_conv", FILTERS)),
    "min_max_quantize": (lambda x: PF.min_max_quantize(x), AFFINE_IN, {
        "min_max_quantize/ql_min": ((1, 1), False), "min_max_quantize/ql_max": ((1, 1), False),
        "min_max_quantize/qr_min": ((1, 1), True), "min_max_quantize/qr_max": ((1, 1), True)}),
    "min_max_quantized_affine": (_affine("min_max_quantized_affine"), AFFINE_IN,
                                 _min_max_layer("min_max_quantized_affine", (6, 3))),
    "min_max_quantized_convolution": (_conv("min_max_quantized_convolution"), CONV_IN,
                                      _min_max_layer("min_max_quantized_conv", FILTERS)),
    "svd_affine": (lambda x: PF.svd_affine(x, 3, 2), AFFINE_IN, {
        "svd_affine/U": ((6, 2), True), "svd_affine/V": ((2, 3), True),
        "svd_affine/b": ((3,), True)}),
    "svd_convolution": (_conv("svd_convolution", 2), CONV_IN, {
        "svd_conv/U": ((8, 3, 3), True), "svd_conv/V": ((3, 8, 1, 1), True),
        "svd_conv/b": ((3,), True)}),
    "cpd3_convolution": (_conv("cpd3_convolution", 2), CONV_IN, {
        "cpd3_conv/I": ((2, 4, 1, 1), True), "cpd3_conv/O": ((3, 2, 1, 1), True),
        "cpd3_conv/K": ((2, 3, 3), True), "cpd3_conv/b": ((3,), True)}),
}

_MM_W = {"ql_min": 0.0, "ql_max": 255.0, "qr_min": -2.0, "qr_max": 2.0}
_MM_B = {"ql_min": 0.0, "ql_max": 255.0, "qr_min": -6.0, "qr_max": 6.0}


def _min_max_sums(w, w_q):
    sums = {"W": w, "W_q": w_q, "b": 0.0, "b_q": 0.0}
    for suffix, ranges in (("w", _MM_W), ("b", _MM_B)):
        sums.update({f"min_max_quantize_{suffix}/min_max_quantize/{k}": v
                     for k, v in ranges.items()})
    return sums


# nnabla 1.39 under nn.seed(313), inputs RandomState(0).randn(AFFINE_IN), then (CONV_IN),
# after one forward: (sum of y, sum of |y|, {parameter: sum of its values}).
NNABLA_SEEDED = {
    "fixed_point_quantized_affine": (1.5566, 7.2909, {"W": 0.55333, "W_q": 0.5625}),
    "fixed_point_quantized_convolution": (14.8488, 43.9535, {"W": 1.34185, "W_q": 1.1875}),
    "pow2_quantized_affine": (1.3644, 8.4167, {"W": 0.55333, "W_q": 0.21875}),
    "pow2_quantized_convolution": (16.7123, 43.2733, {"W": 1.34185, "W_q": 1.61523}),
    "pruned_affine": (-0.4997, 3.8733, {"W": 0.55333, "W_q": -0.69893}),
    "pruned_convolution": (-1.9267, 19.656, {"W": 1.34185, "W_q": -0.05792}),
    "min_max_quantize": (9.0353, 11.4824,
                         {"ql_min": 0.0, "ql_max": 255.0, "qr_min": -6.0, "qr_max": 6.0}),
    "min_max_quantized_affine": (1.7784, 7.4203, _min_max_sums(0.55333, 0.53333)),
    "min_max_quantized_convolution": (16.5517, 43.4085, _min_max_sums(1.34185, 1.33333)),
    "svd_affine": (3.8656, 7.4497, {"U": -0.222, "V": 0.34264, "b": 0.0}),
    "svd_convolution": (12.3466, 41.1111, {"U": 1.23394, "V": -1.75853, "b": 0.0}),
    "cpd3_convolution": (-2.9831, 24.9145, {"I": -2.68803, "O": 0.15125, "K": -1.06049}),
}


def _inputs():
    rng = np.random.RandomState(0)
    return {AFFINE_IN: rng.randn(*AFFINE_IN).astype(np.float32),
            CONV_IN: rng.randn(*CONV_IN).astype(np.float32)}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_registers_nnabla_parameters_in_creation_order(name):
    build, in_shape, expected = LAYERS[name]
    build(nn.Variable(in_shape))
    assert list(_registered().items()) == list(expected.items())


@pytest.mark.parametrize("name", sorted(NNABLA_SEEDED))
def test_seeded_layer_matches_nnabla_values(name):
    build, in_shape, _ = LAYERS[name]
    y_sum, y_abs_sum, param_sums = NNABLA_SEEDED[name]
    nn.seed(313)
    y = build(nn.Variable.from_numpy_array(_inputs()[in_shape]))
    y.forward()
    params = nn.get_parameters(grad_only=False)
    scope = next(iter(params)).split("/", 1)[0]
    got = {k: float(params[f"{scope}/{k}"].d.sum()) for k in param_sums}
    assert got == pytest.approx(param_sums, abs=2e-4)
    assert (float(y.d.sum()), float(np.abs(y.d).sum())) == pytest.approx(
        (y_sum, y_abs_sum), abs=2e-3)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_backward_reaches_the_trainable_parameters(name):
    build, in_shape, _ = LAYERS[name]
    x = nn.Variable.from_numpy_array(_inputs()[in_shape], need_grad=True)
    y = build(x)
    y.forward()
    for p in [x, *nn.get_parameters().values()]:
        p.grad.zero()
    y.backward(np.ones(y.shape, np.float32))
    grads = {k: np.abs(p.g).sum() for k, p in nn.get_parameters().items()
             if "qr_" not in k}      # a min-max range gets no gradient when x is inside it
    grads["x"] = np.abs(x.g).sum()
    assert all(g > 0 for g in grads.values()), grads


def _fixed_point(x, n=8, delta=2**-4):
    limit = (2 ** (n - 1) - 1) * delta
    return np.clip(np.sign(x) * np.floor(np.abs(x) / delta + 0.5) * delta, -limit, limit)


def _prune(x, rate):
    threshold = np.sort(np.abs(x).ravel())[int((x.size - 1) * rate)]
    return np.where(np.abs(x) < threshold, 0, x)


def test_fixed_point_affine_computes_with_quantized_weights_and_stores_them():
    x, w = np.random.RandomState(1).randn(2, 6), np.random.RandomState(2).randn(6, 3)
    b = np.array([0.01, -0.3, 0.52])
    y = PF.fixed_point_quantized_affine(nn.Variable.from_numpy_array(x), 3, w_init=w, b_init=b)
    y.forward()
    params = nn.get_parameters(grad_only=False)
    np.testing.assert_allclose(params["fp_quantized_affine/W_q"].d, _fixed_point(w), atol=1e-6)
    np.testing.assert_allclose(params["fp_quantized_affine/b_q"].d, _fixed_point(b), atol=1e-6)
    np.testing.assert_allclose(y.d, x @ _fixed_point(w) + _fixed_point(b), atol=1e-5)


def test_fixed_point_affine_gradient_is_straight_through():
    x = np.random.RandomState(1).randn(2, 6).astype(np.float32)
    w = np.random.RandomState(2).uniform(-1, 1, (6, 3))
    y = PF.fixed_point_quantized_affine(nn.Variable.from_numpy_array(x), 3, w_init=w)
    y.forward()
    y.backward(np.ones((2, 3), np.float32))
    params = nn.get_parameters()
    np.testing.assert_allclose(params["fp_quantized_affine/W"].g, x.T @ np.ones((2, 3)),
                               atol=1e-5)
    np.testing.assert_allclose(params["fp_quantized_affine/b"].g, [2, 2, 2])


def test_pruned_convolution_computes_with_pruned_filters():
    x = np.random.RandomState(1).randn(2, 4, 5, 5).astype(np.float32)
    w = np.random.RandomState(2).randn(3, 4, 3, 3).astype(np.float32)
    y = PF.pruned_convolution(nn.Variable.from_numpy_array(x), 3, (3, 3), w_init=w,
                              rate_w=0.5, with_bias=False)
    y.forward()
    expected = F.convolution(nn.Variable.from_numpy_array(x),
                             nn.Variable.from_numpy_array(_prune(w, 0.5)))
    expected.forward()
    np.testing.assert_allclose(y.d, expected.d, atol=1e-5)
    np.testing.assert_array_equal(nn.get_parameters(grad_only=False)["pruned_conv/W_q"].d,
                                  _prune(w, 0.5))


def test_pow2_affine_rounds_weights_to_powers_of_two_in_auto_forward():
    w = np.array([[0.26, -0.9], [0.55, 5.0]], np.float32)
    with nn.auto_forward():
        y = PF.pow2_quantized_affine(nn.Variable.from_numpy_array(np.eye(2)), 2, w_init=w,
                                     with_bias=False)
    np.testing.assert_array_equal(y.d, [[0.25, -1], [0.5, 4]])     # 5.0 saturates at 2**m_w
    np.testing.assert_array_equal(
        nn.get_parameters(grad_only=False)["pow2_quantized_affine/W_q"].d, y.d)


def test_disabled_quantization_registers_no_companion():
    PF.fixed_point_quantized_affine(nn.Variable((2, 6)), 3, quantize_w=False, quantize_b=False)
    assert list(_registered()) == ["fp_quantized_affine/W", "fp_quantized_affine/b"]


def test_min_max_quantize_with_moving_average_registers_a_fixed_range():
    PF.min_max_quantize(nn.Variable((2, 3, 4)), x_min_max=True, ema=True, name="q")
    assert _registered()["q/min_max_quantize/qr_min"] == ((1, 1, 1), False)


def test_svd_affine_reproduces_a_weight_of_rank_r():
    rng = np.random.RandomState(3)
    w = (rng.randn(6, 2) @ rng.randn(2, 3)).astype(np.float32)
    x = rng.randn(4, 6).astype(np.float32)
    y = PF.svd_affine(nn.Variable.from_numpy_array(x), 3, 2, uv_init=w, with_bias=False)
    y.forward()
    np.testing.assert_allclose(y.d, x @ w, atol=1e-4)


def test_svd_convolution_with_full_rank_equals_the_convolution():
    rng = np.random.RandomState(4)
    w, x = rng.randn(3, 4, 3, 3), rng.randn(2, 4, 5, 5).astype(np.float32)
    y = PF.svd_convolution(nn.Variable.from_numpy_array(x), 3, (3, 3), 3, pad=(1, 1),
                           uv_init=w, with_bias=False)
    expected = F.convolution(nn.Variable.from_numpy_array(x),
                             nn.Variable.from_numpy_array(w), pad=(1, 1))
    F.sink(y, expected).forward()
    np.testing.assert_allclose(y.d, expected.d, atol=1e-4)


def test_cpd3_convolution_recovers_a_rank_one_filter_bank():
    rng = np.random.RandomState(5)
    w = np.einsum("o,i,k->oik", rng.rand(3), rng.rand(4), rng.rand(9)).reshape(3, 4, 3, 3)
    x = rng.randn(2, 4, 5, 5).astype(np.float32)
    y = PF.cpd3_convolution(nn.Variable.from_numpy_array(x), 3, (3, 3), 1,
                            oik_init=w.astype(np.float32), with_bias=False)
    expected = F.convolution(nn.Variable.from_numpy_array(x), nn.Variable.from_numpy_array(w))
    F.sink(y, expected).forward()
    np.testing.assert_allclose(y.d, expected.d, atol=1e-4)


def test_low_rank_layers_refuse_a_non_positive_rank():
    with pytest.raises(ValueError, match="'r'"):
        PF.svd_convolution(nn.Variable((2, 4, 5, 5)), 3, (3, 3), 0)
