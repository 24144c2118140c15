"""F members composed of other F calls: multi_head_attention, dot, BatchNormalizationInOutAdapter,
and the helpers nnabla's functions module re-exports (function_api, get_auto_forward,
get_current_context)."""
import inspect
import pathlib

import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from nnabla._adapters import composite

TSV = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_signatures.tsv"

# nnabla 1.39.0's F.multi_head_attention on _attention_inputs() with num_heads=2:
# y.ravel() and w[:, 0].ravel()
NNABLA_Y = [-3.124894857406616, -3.199517011642456, 1.7010122537612915, -2.657582998275757,
            3.2896385192871094, 3.1724839210510254, -2.275010108947754, -1.1405857801437378,
            1.2954747676849365, 0.9088611006736755, 5.212299823760986, 2.822359561920166]
NNABLA_W_ROW0 = [6.807308091083542e-05, 0.0, 0.9975501894950867, 0.002381789730861783,
                 2.9156319214962423e-05, 0.0, 0.9999558925628662, 1.4955094229662791e-05,
                 0.9951969981193542, 1.2401392268657219e-06, 0.0, 0.00480178976431489,
                 0.9999986886978149, 9.84490600153265e-10, 0.0, 1.3708291817238205e-06]


def _attention_inputs(seed=0, sizes=(2, 3, 2, 4, 4, 3)):
    rng = np.random.RandomState(seed)
    tgt_len, src_len, batch, dim, embed, out = sizes
    arrays = dict(
        query=rng.randn(tgt_len, batch, dim), key=rng.randn(src_len, batch, dim),
        value=rng.randn(src_len, batch, dim), q_weight=rng.randn(dim, embed),
        k_weight=rng.randn(dim, embed), v_weight=rng.randn(dim, embed),
        out_weight=rng.randn(embed, out), q_bias=rng.randn(embed), k_bias=rng.randn(embed),
        v_bias=rng.randn(embed), out_bias=rng.randn(out), attn_bias_k=rng.randn(embed),
        attn_bias_v=rng.randn(embed), additive_mask=rng.randn(tgt_len, src_len),
        key_padding_mask=np.array([[0, 1, 0], [0, 0, 1]]))
    return {k: a.astype(np.float32) for k, a in arrays.items()}


def ref_multi_head_attention(query, key, value, num_heads, q_weight, k_weight, v_weight,
                             out_weight, q_bias=0, k_bias=0, v_bias=0, out_bias=0,
                             attn_bias_k=None, attn_bias_v=None, additive_mask=None,
                             key_padding_mask=None):
    """Per batch sample and head, in float64."""
    q, k, v = query @ q_weight + q_bias, key @ k_weight + k_bias, value @ v_weight + v_bias
    if attn_bias_k is not None:
        k = np.concatenate([k, np.broadcast_to(attn_bias_k, (1,) + k.shape[1:])])
        v = np.concatenate([v, np.broadcast_to(attn_bias_v, (1,) + v.shape[1:])])
    src_len, batch = k.shape[:2]
    mask = np.zeros((query.shape[0], src_len))
    if additive_mask is not None:
        mask[:, :additive_mask.shape[1]] += additive_mask
    d, dv = q.shape[2] // num_heads, v.shape[2] // num_heads
    heads, weights = np.zeros(q.shape[:2] + (v.shape[2],)), []
    for b in range(batch):
        for h in range(num_heads):
            s = q[:, b, h * d:(h + 1) * d] @ k[:, b, h * d:(h + 1) * d].T / np.sqrt(d) + mask
            if key_padding_mask is not None:
                s[:, np.flatnonzero(key_padding_mask[b])] = -np.inf
            w = np.exp(s - s.max(axis=1, keepdims=True))
            w /= w.sum(axis=1, keepdims=True)
            weights.append(w)
            heads[:, b, h * dv:(h + 1) * dv] = w @ v[:, b, h * dv:(h + 1) * dv]
    return heads @ out_weight + out_bias, np.stack(weights)


def _variables(arrays):
    return {k: nn.Variable.from_numpy_array(a, need_grad=True) for k, a in arrays.items()}


@pytest.mark.conformance
@pytest.mark.parametrize("name", composite.__all__)
def test_signature_equals_nnabla(name):
    rows = [line.split("\t") for line in TSV.read_text().splitlines()]
    expected = {r[1]: r[2] for r in rows if len(r) == 3 and r[0] == "nnabla.functions"}
    assert str(inspect.signature(getattr(F, name))) == expected[name]


@pytest.mark.parametrize("options", [
    (), ("q_bias", "k_bias", "v_bias", "out_bias"), ("additive_mask",), ("key_padding_mask",),
    ("attn_bias_k", "attn_bias_v", "additive_mask", "key_padding_mask", "q_bias", "out_bias")])
def test_multi_head_attention_matches_numpy(options):
    arrays = _attention_inputs()
    required = ("query", "key", "value", "q_weight", "k_weight", "v_weight", "out_weight")
    chosen = {k: arrays[k] for k in required + options}
    y, w = F.multi_head_attention(num_heads=2, **_variables(chosen))
    F.sink(y, w).forward()
    ref_y, ref_w = ref_multi_head_attention(
        num_heads=2, **{k: a.astype(np.float64) for k, a in chosen.items()})
    np.testing.assert_allclose(y.d, ref_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w.d, ref_w, rtol=1e-4, atol=1e-6)


def test_multi_head_attention_matches_values_recorded_from_nnabla():
    y, w = F.multi_head_attention(num_heads=2, **_variables(_attention_inputs()))
    F.sink(y, w).forward()
    assert y.shape == (2, 2, 3) and w.shape == (4, 2, 4)
    np.testing.assert_allclose(y.d.ravel(), NNABLA_Y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.d[:, 0].ravel(), NNABLA_W_ROW0, rtol=1e-5, atol=1e-7)


def test_multi_head_attention_backward_matches_finite_differences():
    arrays = _attention_inputs(seed=1)
    arrays.pop("key_padding_mask")
    variables = _variables(arrays)
    y, _ = F.multi_head_attention(num_heads=2, **variables)
    direction = np.random.RandomState(2).randn(*y.shape).astype(np.float32)
    y.forward()
    y.backward(direction)
    for name in ("query", "k_weight", "attn_bias_v", "additive_mask"):
        x, eps = arrays[name].astype(np.float64), 1e-5
        step = np.random.RandomState(3).randn(*x.shape)

        def loss(t):
            values = {k: a.astype(np.float64) for k, a in arrays.items()}
            values[name] = x + t * step
            return np.sum(ref_multi_head_attention(num_heads=2, **values)[0] * direction)
        numeric = (loss(eps) - loss(-eps)) / (2 * eps)
        assert np.sum(variables[name].g * step) == pytest.approx(numeric, rel=1e-3, abs=1e-3)


def test_multi_head_attention_dropout_zeroes_or_rescales_weights():
    arrays = _attention_inputs()
    kept = {k: arrays[k] for k in ("query", "key", "value", "q_weight", "k_weight",
                                   "v_weight", "out_weight")}
    y, w = F.multi_head_attention(num_heads=2, dropout=0.5, **_variables(kept))
    F.sink(y, w).forward()
    _, ref_w = ref_multi_head_attention(num_heads=2, **kept)
    scaled = w.d * 0.5
    assert np.all(np.isclose(scaled, 0) | np.isclose(scaled, ref_w, rtol=1e-4, atol=1e-6))
    v = kept["value"] @ kept["v_weight"]
    heads = np.stack([np.concatenate([w.d[b * 2 + h] @ v[:, b, h * 2:(h + 1) * 2]
                                      for h in range(2)], axis=1) for b in range(2)], axis=1)
    np.testing.assert_allclose(y.d, heads @ kept["out_weight"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("change, argument", [
    (dict(value=np.zeros((4, 2, 4), np.float32)), "value"),
    (dict(k_weight=np.zeros((4, 6), np.float32)), "k_weight"),
    (dict(q_weight=np.zeros((4, 3), np.float32), k_weight=np.zeros((4, 3), np.float32)),
     "q_weight"),
    (dict(key_padding_mask=np.zeros((2, 4), np.float32)), "key_padding_mask")])
def test_multi_head_attention_shape_errors_name_the_argument(change, argument):
    arrays = _attention_inputs()
    arrays.update(change)
    with pytest.raises(ValueError, match=f"F.multi_head_attention: argument '{argument}'"):
        F.multi_head_attention(num_heads=2, **_variables(arrays))


def _nd(a):
    return nn.NdArray.from_numpy_array(np.asarray(a, np.float32))


@pytest.mark.parametrize("shape_a, shape_b", [
    ((3,), (3,)), ((2, 3), (3, 4)), ((), (2, 3)), ((2, 3), ()), ((2, 3, 4), (4,)),
    ((2, 3, 4), (5, 4, 2)), ((3,), (3, 2))])
def test_dot_matches_numpy_for_ndarrays_and_variables(shape_a, shape_b):
    rng = np.random.RandomState(0)
    a, b = np.asarray(rng.randn(*shape_a), np.float32), np.asarray(rng.randn(*shape_b), np.float32)
    np.testing.assert_allclose(F.dot(_nd(a), _nd(b)).data, np.dot(a, b), rtol=1e-5, atol=1e-6)
    y = F.dot(nn.Variable.from_numpy_array(a), nn.Variable.from_numpy_array(b))
    y.forward()
    assert isinstance(y, nn.Variable)
    np.testing.assert_allclose(y.d, np.dot(a, b), rtol=1e-5, atol=1e-6)


def test_dot_falls_back_to_numpy_and_scales_by_scalars():
    np.testing.assert_array_equal(F.dot(np.ones((2, 3)), np.ones(3)), [3, 3])
    scaled = F.dot(2.0, _nd(np.ones(2)))
    assert isinstance(scaled, nn.NdArray)
    np.testing.assert_array_equal(scaled.data, [2, 2])


def test_dot_writes_into_out_and_returns_none():
    out = nn.NdArray((2, 4))
    out.cast(np.float32)
    assert F.dot(_nd(np.ones((2, 3))), _nd(np.ones((3, 4))), out) is None
    np.testing.assert_array_equal(out.data, np.full((2, 4), 3))
    out_var = nn.Variable((2, 4))
    out_var.data.cast(np.float32)
    a, b = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32)), \
        nn.Variable.from_numpy_array(np.ones((3, 4), np.float32))
    assert F.dot(a, b, out_var) is None
    out_var.forward()
    np.testing.assert_array_equal(out_var.d, np.full((2, 4), 3))
    with pytest.raises(ValueError, match="F.dot: argument 'out'"):
        F.dot(_nd(np.ones((2, 3))), _nd(np.ones((3, 4))), nn.NdArray((2, 5)))


def test_batch_normalization_adapter_flattens_axes_last_and_inverts():
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    adapter = F.BatchNormalizationInOutAdapter(4, [0, 2])
    y = adapter(_nd(x))
    np.testing.assert_array_equal(y.data, x.transpose(1, 3, 0, 2).reshape(3, 5, 8))
    np.testing.assert_array_equal(adapter.inv(y).data, x)
    with pytest.raises(ValueError, match="shape of the first call"):
        adapter(_nd(np.zeros((2, 3, 4, 6))))
    with pytest.raises(ValueError, match="argument 'axes'"):
        F.BatchNormalizationInOutAdapter(4, [1])


def test_function_api_passes_the_current_context_first():
    @F.function_api
    def scaled(ctx, x, scale=2):
        """Doc."""
        return ctx, x * scale

    assert str(inspect.signature(scaled)) == "(x, scale=2)"
    assert scaled.__doc__.startswith("Doc.") and scaled.__function_api_base__ is not None
    ctx = nn.Context(["cpu:float"], "CpuCachedArray", "0")
    with nn.context_scope(ctx):
        got, value = scaled(3, scale=4)
    assert got.backend == ctx.backend and value == 12
    with pytest.raises(ValueError, match="'ctx'"):
        F.function_api(lambda x: x)


def test_context_and_auto_forward_helpers_are_nnablas():
    assert F.get_current_context is nn.get_current_context
    assert F.get_auto_forward is nn.get_auto_forward
    with nn.auto_forward(True):
        assert F.get_auto_forward()
