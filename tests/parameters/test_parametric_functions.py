"""Parametric functions: parameter names, shapes, flags, default initialisation, forward."""

import inspect
import pathlib

import nnabla as nn
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import numpy as np
import pytest

SIGNATURES = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_signatures.tsv"


def _shapes(grad_only=False):
    return {k: tuple(v.shape) for k, v in nn.get_parameters(grad_only=grad_only).items()}


def _pf_signatures():
    rows = [line.split("\t") for line in SIGNATURES.read_text().splitlines()
            if not line.startswith("#")]
    return [(r[1], r[2]) for r in rows if r[0] == "nnabla.parametric_functions"]


@pytest.mark.conformance
@pytest.mark.parametrize("name, signature", _pf_signatures())
def test_signature_matches_nnabla(name, signature):
    assert hasattr(PF, name), f"PF.{name} is missing"
    assert str(inspect.signature(getattr(PF, name))) == signature


def test_affine_registers_weight_and_bias_in_affine_scope():
    PF.affine(nn.Variable((2, 3, 4)), 5)
    assert _shapes() == {"affine/W": (12, 5), "affine/b": (5,)}


def test_name_argument_wraps_the_function_scope():
    PF.affine(nn.Variable((2, 3)), (4, 2), name="fc1")
    with nn.parameter_scope("outer"):
        PF.affine(nn.Variable((2, 3)), 4, base_axis=1, with_bias=False)
    assert _shapes() == {"fc1/affine/W": (3, 4, 2), "fc1/affine/b": (4, 2),
                         "outer/affine/W": (3, 4)}


def test_convolution_family_weight_shapes():
    x = nn.Variable((2, 4, 8, 8))
    PF.convolution(x, 6, (3, 3), group=2, name="c")
    PF.deconvolution(x, 6, (3, 3), group=2, name="d")
    PF.depthwise_convolution(x, (3, 3), multiplier=2, name="dw")
    PF.depthwise_deconvolution(x, (3, 3), divisor=2, name="dd")
    PF.convolution(nn.Variable((2, 8, 8, 4)), 6, (3, 3), channel_last=True, name="cl")
    assert _shapes() == {
        "c/conv/W": (6, 2, 3, 3), "c/conv/b": (6,),
        "d/deconv/W": (4, 3, 3, 3), "d/deconv/b": (6,),
        "dw/depthwise_conv/W": (8, 3, 3), "dw/depthwise_conv/b": (8,),
        "dd/depthwise_deconv/W": (4, 3, 3), "dd/depthwise_deconv/b": (2,),
        "cl/conv/W": (6, 3, 3, 4), "cl/conv/b": (6,)}


def test_default_init_equals_seeded_numpy_uniform_in_call_order():
    nn.seed(313)
    PF.affine(nn.Variable((2, 3, 4)), 5)
    PF.convolution(nn.Variable((1, 3, 5, 5)), 2, (3, 3))
    rng = np.random.RandomState(313)
    lim = np.sqrt(6 / (12 + 5))
    w_affine = rng.uniform(-lim, lim, (12, 5)).astype(np.float32)
    lim = np.sqrt(6 / (9 * (3 + 2)))
    w_conv = rng.uniform(-lim, lim, (2, 3, 3, 3)).astype(np.float32)
    params = nn.get_parameters()
    np.testing.assert_array_equal(params["affine/W"].d, w_affine)
    np.testing.assert_array_equal(params["conv/W"].d, w_conv)
    assert not params["affine/b"].d.any()


def test_explicit_rng_is_used_instead_of_the_global_one():
    PF.affine(nn.Variable((1, 3)), 2, rng=np.random.RandomState(5))
    lim = np.sqrt(6 / 5)
    ref = np.random.RandomState(5).uniform(-lim, lim, (3, 2)).astype(np.float32)
    np.testing.assert_array_equal(nn.get_parameters()["affine/W"].d, ref)


def test_second_call_reuses_parameters_without_drawing():
    nn.seed(1)
    x = nn.Variable((2, 3))
    PF.affine(x, 4)
    PF.affine(x, 4)
    PF.affine(x, 4, name="next")
    lim = np.sqrt(6 / 7)
    rng = np.random.RandomState(1)
    rng.uniform(-lim, lim, (3, 4))
    ref = rng.uniform(-lim, lim, (3, 4)).astype(np.float32)
    np.testing.assert_array_equal(nn.get_parameters()["next/affine/W"].d, ref)


def test_reusing_a_scope_with_another_input_size_raises():
    PF.affine(nn.Variable((2, 3)), 4)
    with pytest.raises(ValueError, match=r"affine/W.*\(3, 4\).*\(5, 4\)"):
        PF.affine(nn.Variable((2, 5)), 4)


def test_batch_normalization_parameters_shapes_and_flags():
    y = PF.batch_normalization(nn.Variable((2, 3, 4, 4)), fix_parameters=True)
    params = nn.get_parameters(grad_only=False)
    assert list(params) == ["bn/beta", "bn/gamma", "bn/mean", "bn/var"]
    assert all(v.shape == (1, 3, 1, 1) for v in params.values())
    assert params["bn/beta"].need_grad and params["bn/gamma"].need_grad
    assert not params["bn/mean"].need_grad and not params["bn/var"].need_grad
    assert not any(v.need_grad for v in y.parent.inputs[1:5])
    np.testing.assert_array_equal(params["bn/gamma"].d, np.ones((1, 3, 1, 1)))
    np.testing.assert_array_equal(params["bn/var"].d, np.ones((1, 3, 1, 1)))


def test_batch_normalization_no_scale_no_bias_and_param_init():
    PF.batch_normalization(nn.Variable((2, 3)), no_scale=True,
                           param_init={"beta": I.ConstantInitializer(2)})
    params = nn.get_parameters(grad_only=False)
    assert list(params) == ["bn/beta", "bn/mean", "bn/var"]
    np.testing.assert_array_equal(params["bn/beta"].d, np.full((1, 3), 2))


def test_fused_batch_normalization_uses_bn_scope():
    PF.fused_batch_normalization(nn.Variable((2, 3, 4)))
    assert set(_shapes()) == {"bn/beta", "bn/gamma", "bn/mean", "bn/var"}


def test_normalization_parameter_shapes():
    x = nn.Variable((2, 4, 3, 3))
    PF.layer_normalization(x)
    PF.instance_normalization(x)
    PF.group_normalization(x, 2)
    assert _shapes() == {
        "layer_normalization/beta": (1, 4, 3, 3), "layer_normalization/gamma": (1, 4, 3, 3),
        "instance_normalization/beta": (1, 4, 1, 1),
        "instance_normalization/gamma": (1, 4, 1, 1),
        "group_normalization/beta": (1, 4, 1, 1), "group_normalization/gamma": (1, 4, 1, 1)}


def test_prelu_default_slope_is_a_shared_quarter():
    PF.prelu(nn.Variable((2, 3)))
    PF.prelu(nn.Variable((2, 3)), shared=False, name="per_channel")
    params = nn.get_parameters()
    assert params["prelu/slope"].shape == () and float(params["prelu/slope"].d) == 0.25
    assert params["per_channel/prelu/slope"].shape == (3,)


def test_embed_default_weights_lie_within_sqrt3():
    PF.embed(nn.Variable((2, 3)), 10, 4)
    w = nn.get_parameters()["embed/W"].d
    assert w.shape == (10, 4) and np.all(np.abs(w) <= np.sqrt(3))


def test_fix_parameters_keeps_registration_but_returns_no_grad():
    y = PF.affine(nn.Variable((2, 3)), 4, fix_parameters=True)
    assert set(nn.get_parameters()) == {"affine/W", "affine/b"}
    assert not any(v.need_grad for v in y.parent.inputs[1:])


def test_no_grad_context_returns_parameters_without_gradients():
    with nn.no_grad():
        y = PF.convolution(nn.Variable((1, 2, 4, 4)), 3, (3, 3))
    assert not any(v.need_grad for v in y.parent.inputs[1:])
    assert set(nn.get_parameters()) == {"conv/W", "conv/b"}


def test_recurrent_parameter_shapes():
    x, h, c = nn.Variable((5, 2, 3)), nn.Variable((2, 1, 2, 4)), nn.Variable((2, 1, 2, 4))
    PF.rnn(x, h)
    PF.lstm(x, h, c)
    PF.gru(x, h)
    assert _shapes() == {
        "rnn/weight_l0": (1, 4, 7), "rnn/weight": (1, 1, 4, 8), "rnn/bias": (2, 1, 4),
        "lstm/weight_l0": (1, 4, 4, 7), "lstm/weight": (1, 1, 4, 4, 8),
        "lstm/bias": (2, 1, 4, 4),
        "gru/weight_l0": (1, 3, 4, 7), "gru/weight": (1, 1, 3, 4, 8), "gru/bias": (2, 1, 4, 4)}


def test_lstm_default_weight_concatenates_input_and_hidden_blocks():
    nn.seed(7)
    PF.lstm(nn.Variable((5, 2, 3)), nn.Variable((1, 1, 2, 4)), nn.Variable((1, 1, 2, 4)))
    rng = np.random.RandomState(7)
    lim_ih, lim_hh = np.sqrt(6 / 7), np.sqrt(6 / 8)
    ih = rng.uniform(-lim_ih, lim_ih, (1, 4, 4, 3))
    hh = rng.uniform(-lim_hh, lim_hh, (1, 4, 4, 4))
    ref = np.concatenate([ih, hh], axis=3).astype(np.float32)
    np.testing.assert_array_equal(nn.get_parameters()["lstm/weight_l0"].d, ref)


def test_lstm_cell_registers_an_affine_under_lstm():
    x, h = nn.Variable((2, 3)), nn.Variable((2, 4))
    PF.lstm_cell(x, h, nn.Variable((2, 4)), 4)
    assert _shapes() == {"lstm/affine/W": (7, 4, 4), "lstm/affine/b": (4, 4)}


def test_weight_and_spectral_normalization_parameters():
    w = nn.Variable.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    PF.weight_normalization(w, dim=0)
    PF.spectral_norm(w, dim=1)
    params = nn.get_parameters(grad_only=False)
    np.testing.assert_allclose(params["wn/g"].d, np.linalg.norm(w.d, axis=1), rtol=1e-6)
    assert params["spectral-norm/u"].shape == (3,) and not params["spectral-norm/u"].need_grad


def test_custom_parametric_function_gets_name_argument_and_scope():
    @PF.parametric_function_api("dummy")
    def dummy(shape, f=10, fix_parameters=False):
        """Doc."""
        return nn.parameter.get_parameter_or_create("p", shape)

    assert list(inspect.signature(dummy).parameters) == ["shape", "f", "fix_parameters", "name"]
    assert dummy.__doc__.splitlines()[0] == "Doc."
    dummy((2,), name="g")
    dummy((2,))
    assert list(nn.get_parameters()) == ["g/dummy/p", "dummy/p"]


def test_parametric_function_api_requires_fix_parameters():
    with pytest.raises(ValueError, match="fix_parameters"):
        PF.parametric_function_api("x")(lambda inp: inp)


def test_binary_and_inq_layers_register_companion_arrays_without_gradients():
    x = nn.Variable((2, 3, 4, 4))
    PF.binary_connect_affine(x, 5)
    PF.binary_weight_convolution(x, 2, (3, 3), group=1)
    PF.inq_affine(x, 5)
    shapes = _shapes()
    assert shapes["bicon_affine/Wb"] == (48, 5) and shapes["bwn_conv/W"] == (2, 3, 3, 3)
    assert shapes["bwn_conv/alpha"] == (2,) and shapes["inq_affine/I"] == (48, 5)
    trainable = set(nn.get_parameters())
    assert {"bicon_affine/Wb", "bwn_conv/alpha", "inq_affine/I"}.isdisjoint(trainable)


def _forward(y):
    y.forward()
    return y.d


def test_affine_forward_matches_numpy_with_given_initializers():
    rng = np.random.RandomState(0)
    x_data, w, b = rng.randn(2, 3, 2), rng.randn(6, 4), rng.randn(4)
    x = nn.Variable.from_numpy_array(x_data.astype(np.float32))
    y = PF.affine(x, 4, w_init=w.astype(np.float32), b_init=b.astype(np.float32))
    np.testing.assert_allclose(_forward(y), x_data.reshape(2, 6) @ w + b, rtol=1e-5,
                               atol=1e-5)


def test_convolution_forward_matches_numpy_1x1():
    rng = np.random.RandomState(1)
    x_data, w = rng.randn(2, 3, 4, 4), rng.randn(5, 3, 1, 1)
    x = nn.Variable.from_numpy_array(x_data.astype(np.float32))
    y = PF.convolution(x, 5, (1, 1), w_init=w.astype(np.float32), with_bias=False)
    ref = np.einsum("nchw,oc->nohw", x_data, w[:, :, 0, 0])
    np.testing.assert_allclose(_forward(y), ref, rtol=1e-5, atol=1e-5)


def test_batch_normalization_inference_uses_running_statistics():
    rng = np.random.RandomState(2)
    x_data = rng.randn(4, 3).astype(np.float32)
    init = {"mean": np.full((1, 3), 0.5, np.float32), "var": np.full((1, 3), 4, np.float32),
            "gamma": np.full((1, 3), 2, np.float32)}
    y = PF.batch_normalization(nn.Variable.from_numpy_array(x_data), batch_stat=False,
                               param_init=init)
    ref = (x_data - 0.5) / np.sqrt(4 + 1e-5) * 2
    np.testing.assert_allclose(_forward(y), ref, rtol=1e-5, atol=1e-5)


def test_embed_and_prelu_forward():
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    idx = nn.Variable.from_numpy_array(np.array([[3, 0]]))
    np.testing.assert_array_equal(_forward(PF.embed(idx, 4, 3, initializer=w)), w[[[3, 0]]])
    x = nn.Variable.from_numpy_array(np.array([[-2.0, 3.0]], np.float32))
    np.testing.assert_allclose(_forward(PF.prelu(x)), [[-0.5, 3.0]])
