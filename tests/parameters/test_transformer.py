"""PF.multi_head_attention and the transformer: parameter names, shapes and scopes, forward
against numpy with given weights, and values recorded from nnabla 1.39 for a fixed seed."""
import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import numpy as np
import pytest

# nnabla 1.39.0: nn.seed(7); _transformer_inputs(); PF.transformer(src, tgt, embed_dim=4,
# num_heads=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=6, dropout=0.0,
# add_attn_bias=True); y.d.ravel() and the sum of |parameters|
NNABLA_TRANSFORMER_Y = [
    -0.3268207311630249, -0.7812950611114502, -0.6011034250259399, 1.7092190980911255,
    0.9071274995803833, -1.6780071258544922, 0.5646824240684509, 0.2061973214149475,
    1.074100136756897, -1.420790433883667, 0.7928315997123718, -0.44614118337631226]
NNABLA_TRANSFORMER_ABS_PARAMETER_SUM = 155.35807073116302

ATTENTION = ["q_weight", "k_weight", "v_weight", "out_weight", "q_bias", "k_bias", "v_bias",
             "out_bias", "attn_bias_k", "attn_bias_v"]


def _shapes():
    return {k: tuple(v.shape) for k, v in nn.get_parameters(grad_only=False).items()}


def _var(a):
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32))


def _transformer_inputs():
    rng = np.random.RandomState(0)
    return _var(rng.randn(2, 1, 4)), _var(rng.randn(3, 1, 4))


def ref_attention(q_in, kv_in, p, num_heads):
    """Numpy multi-head attention over (L, B, E) inputs with parameters ``p``."""
    q, k, v = (q_in @ p["q_weight"] + p["q_bias"], kv_in @ p["k_weight"] + p["k_bias"],
               kv_in @ p["v_weight"] + p["v_bias"])
    d = q.shape[2] // num_heads
    heads = np.zeros(q.shape)
    for b in range(q.shape[1]):
        for h in range(num_heads):
            cut = slice(h * d, (h + 1) * d)
            s = q[:, b, cut] @ k[:, b, cut].T / np.sqrt(d)
            w = np.exp(s - s.max(axis=1, keepdims=True))
            heads[:, b, cut] = (w / w.sum(axis=1, keepdims=True)) @ v[:, b, cut]
    return heads @ p["out_weight"] + p["out_bias"]


def ref_layer_norm(x, eps=1e-5):
    return (x - x.mean(axis=2, keepdims=True)) / np.sqrt(x.var(axis=2, keepdims=True) + eps)


def test_multi_head_attention_parameter_names_shapes_and_flags():
    query, key, value = nn.Variable((3, 2, 8)), nn.Variable((5, 2, 6)), nn.Variable((5, 2, 10))
    y, w = PF.multi_head_attention(query, key, value, num_heads=2, k_embed_dim=4,
                                   v_embed_dim=6, out_dim=7, add_attn_bias=True,
                                   fix_parameters=True, name="att")
    assert y.shape == (3, 2, 7) and w.shape == (4, 3, 6)
    shapes = _shapes()
    assert list(shapes) == [f"att/multi_head_attention/{n}" for n in ATTENTION]
    assert list(shapes.values()) == [(8, 4), (6, 4), (10, 6), (6, 7), (4,), (4,), (6,), (7,),
                                     (1, 1, 4), (1, 1, 6)]
    assert len(nn.get_parameters()) == 10          # registered trainable, used fixed
    assert not y.parent.inputs[1].need_grad


def test_multi_head_attention_without_bias_and_with_param_init():
    x = nn.Variable((2, 1, 4))
    PF.multi_head_attention(x, x, x, num_heads=1, with_bias=False,
                            param_init={"q_weight": I.ConstantInitializer(0.5)})
    assert list(_shapes()) == [f"multi_head_attention/{n}" for n in ATTENTION[:4]]
    np.testing.assert_array_equal(nn.get_parameters()["multi_head_attention/q_weight"].d, 0.5)


def test_multi_head_attention_forward_matches_numpy_with_given_weights():
    rng = np.random.RandomState(1)
    shapes = dict(q_weight=(4, 4), k_weight=(4, 4), v_weight=(4, 4), out_weight=(4, 4),
                  q_bias=(4,), k_bias=(4,), v_bias=(4,), out_bias=(4,))
    params = {k: rng.randn(*s).astype(np.float32) for k, s in shapes.items()}
    q, kv = rng.randn(3, 2, 4).astype(np.float32), rng.randn(5, 2, 4).astype(np.float32)
    y, _ = PF.multi_head_attention(_var(q), _var(kv), _var(kv), num_heads=2, param_init=params)
    y.forward()
    np.testing.assert_allclose(y.d, ref_attention(q, kv, params, 2), rtol=1e-4, atol=1e-5)


def test_transformer_encode_matches_numpy_with_given_weights():
    rng = np.random.RandomState(2)
    src = rng.randn(3, 2, 4).astype(np.float32)
    y = PF.transformer_encode(_var(src), embed_dim=4, num_heads=2, dim_feedforward=6,
                              dropout=0.0, name="enc")
    params = {k: v.d for k, v in nn.get_parameters().items()}
    for k, v in params.items():                  # replace zero biases and unit gammas
        v[...] = rng.randn(*v.shape)
    y.forward()

    def p(scope):
        prefix = f"enc/transformer_encode/{scope}/"
        return {k[len(prefix):]: v.astype(np.float64) for k, v in params.items()
                if k.startswith(prefix)}

    def norm(x, scope):
        return ref_layer_norm(x) * p(scope)["layer_normalization/gamma"] + \
            p(scope)["layer_normalization/beta"]
    mha = {k.split("/")[-1]: v for k, v in p("src_self_attn").items()}
    h = norm(src + ref_attention(src, src, mha, 2), "enc_layer_norm1")
    f = np.maximum(h @ p("enc_affine1")["affine/W"] + p("enc_affine1")["affine/b"], 0)
    f = f @ p("enc_affine2")["affine/W"] + p("enc_affine2")["affine/b"]
    np.testing.assert_allclose(y.d, norm(h + f, "enc_layer_norm2"), rtol=1e-4, atol=1e-4)


def test_transformer_decode_creates_two_attentions_three_norms_and_two_affines():
    tgt, memory = nn.Variable((4, 2, 8)), nn.Variable((3, 2, 8))
    y = PF.transformer_decode(tgt, memory, 8, 2, dim_feedforward=16, dropout=0.1)
    assert y.shape == (4, 2, 8)
    scopes = sorted({k.split("/")[1] for k in _shapes()})
    assert scopes == ["dec_affine1", "dec_affine2", "dec_layer_norm1", "dec_layer_norm2",
                      "dec_layer_norm3", "tgt_memory_attn", "tgt_self_attn"]
    assert _shapes()["transformer_decode/dec_affine1/affine/W"] == (8, 16)


def test_transformer_matches_values_recorded_from_nnabla_for_a_fixed_seed():
    nn.seed(7)
    src, tgt = _transformer_inputs()
    y = PF.transformer(src, tgt, embed_dim=4, num_heads=2, num_encoder_layers=1,
                       num_decoder_layers=1, dim_feedforward=6, dropout=0.0,
                       add_attn_bias=True)
    y.forward()
    np.testing.assert_allclose(y.d.ravel(), NNABLA_TRANSFORMER_Y, rtol=1e-5, atol=1e-5)
    total = sum(float(np.abs(p.d).sum()) for p in nn.get_parameters().values())
    assert total == pytest.approx(NNABLA_TRANSFORMER_ABS_PARAMETER_SUM, rel=1e-6)
    names = list(_shapes())
    assert len(names) == 48
    assert names[0] == ("transformer/encoder00/transformer_encode/src_self_attn/"
                        "multi_head_attention/q_weight")
    assert names[-1] == ("transformer/decoder00/transformer_decode/dec_layer_norm3/"
                         "layer_normalization/gamma")


def test_transformer_checks_batch_and_embedding_sizes():
    with pytest.raises(ValueError, match="argument 'tgt'.*batch size"):
        PF.transformer(nn.Variable((2, 1, 4)), nn.Variable((2, 3, 4)), embed_dim=4)
    with pytest.raises(ValueError, match="argument 'src'.*embed_dim"):
        PF.transformer(nn.Variable((2, 1, 6)), nn.Variable((2, 1, 4)), embed_dim=4)


def test_transformer_is_trainable_end_to_end():
    src, tgt = _transformer_inputs()
    y = PF.transformer(src, tgt, embed_dim=4, num_heads=2, num_encoder_layers=2,
                       num_decoder_layers=2, dim_feedforward=6, dropout=0.0)
    loss = F.sum(y * y)
    loss.forward()
    loss.backward()
    grads = {k: float(np.abs(v.g).sum()) for k, v in nn.get_parameters().items()}
    assert len(grads) == 2 * 16 + 2 * 26 and all(np.isfinite(list(grads.values())))
