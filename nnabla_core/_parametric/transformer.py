"""Parametric attention layers: multi_head_attention and the transformer built from it.

As in nnabla, ``transformer_encode`` and ``transformer_decode`` create their inner
attention, affine and layer-normalization parameters with default initializers: their
``rng`` and ``fix_parameters`` arguments are accepted but not passed on.
"""

from .. import functions as F
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .api import get_or_create, parametric_function_api
from .layers import affine
from .normalization import layer_normalization


def _glorot(param_init, name, rng, fan_in, fan_out):
    """``param_init[name]``, or a Glorot-uniform initializer for (fan_in, fan_out)."""
    return param_init.get(name, UniformInitializer(calc_uniform_lim_glorot(fan_in, fan_out), rng))


@parametric_function_api("multi_head_attention", [
    ("q_weight", "weights for query", "(D_q, E)", True),
    ("k_weight", "weights for key", "(D_k, E)", True),
    ("v_weight", "weights for value", "(D_v, E_v)", True),
    ("out_weight", "weights for the output projection", "(E_v, E_out)", True),
    ("q_bias", "bias for query", "(E,)", True),
    ("k_bias", "bias for key", "(E,)", True),
    ("v_bias", "bias for value", "(E_v,)", True),
    ("out_bias", "bias for the output projection", "(E_out,)", True),
    ("attn_bias_k", "attention bias for key", "(1, 1, E)", True),
    ("attn_bias_v", "attention bias for value", "(1, 1, E_v)", True)])
def multi_head_attention(query, key, value, num_heads=12, dropout=0.0, k_embed_dim=None,
                         v_embed_dim=None, out_dim=None, rng=None, with_bias=True,
                         add_attn_bias=False, additive_mask=None, key_padding_mask=None,
                         fix_parameters=False, param_init=None):
    """Multi-head attention of ``query`` ``(L_T, B, D_q)`` over ``key``/``value`` ``(L_S, B, D)``.

    Creates the projections of :func:`nnabla.functions.multi_head_attention`: weights
    Glorot-uniform, biases zero, ``attn_bias_k``/``attn_bias_v`` (if ``add_attn_bias``)
    Glorot-uniform. ``E`` is ``k_embed_dim`` (default ``D_q``), ``E_v`` is ``v_embed_dim``
    (default ``D_v``) and ``E_out`` is ``out_dim`` (default ``E_v``).

    Args:
        query, key, value (~nnabla.Variable): The attention inputs.
        num_heads (int): Number of heads; must divide ``E`` and ``E_v``.
        dropout (float): Dropout ratio of the attention weights.
        k_embed_dim, v_embed_dim, out_dim (int, optional): Embedding sizes, see above.
        rng (numpy.random.RandomState, optional): Random source of the initializers.
        with_bias (bool): Create the four biases.
        add_attn_bias (bool): Create ``attn_bias_k`` and ``attn_bias_v``.
        additive_mask, key_padding_mask (~nnabla.Variable, optional): As in
            :func:`nnabla.functions.multi_head_attention`.
        fix_parameters (bool): Return the parameters with ``need_grad=False``.
        param_init (dict, optional): Initializer or array per parameter name.

    Returns:
        tuple of ~nnabla.Variable: ``y`` ``(L_T, B, E_out)`` and the attention weights
        ``(B*H, L_T, L_S)``.

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> nn.clear_parameters()
        >>> x = nn.Variable((3, 2, 8))
        >>> y, w = PF.multi_head_attention(x, x, x, num_heads=2)
        >>> y.shape, sorted(nn.get_parameters())[:2]
        ((3, 2, 8), ['multi_head_attention/k_bias', 'multi_head_attention/k_weight'])
        >>> nn.clear_parameters()
    """
    q_embed_dim = k_embed_dim = query.shape[2] if k_embed_dim is None else k_embed_dim
    v_embed_dim = value.shape[2] if v_embed_dim is None else v_embed_dim
    out_dim = v_embed_dim if out_dim is None else out_dim
    param_init = param_init or {}
    inits = [_glorot(param_init, "q_weight", rng, query.shape[2], q_embed_dim),
             _glorot(param_init, "k_weight", rng, key.shape[2], k_embed_dim),
             _glorot(param_init, "v_weight", rng, value.shape[2], v_embed_dim)]
    weights = [get_or_create(name, (x.shape[2], dim), init, fix_parameters)
               for name, x, dim, init in (("q_weight", query, q_embed_dim, inits[0]),
                                          ("k_weight", key, k_embed_dim, inits[1]),
                                          ("v_weight", value, v_embed_dim, inits[2]))]
    weights.append(get_or_create(
        "out_weight", (v_embed_dim, out_dim),
        _glorot(param_init, "out_weight", rng, v_embed_dim, out_dim), fix_parameters))
    biases = [None] * 4
    if with_bias:
        biases = [get_or_create(name, (dim,), param_init.get(name, ConstantInitializer()),
                                fix_parameters)
                  for name, dim in (("q_bias", q_embed_dim), ("k_bias", k_embed_dim),
                                    ("v_bias", v_embed_dim), ("out_bias", out_dim))]
    attention_biases = [None, None]
    if add_attn_bias:
        inits = [_glorot(param_init, "attn_bias_k", rng, k_embed_dim, 1),
                 _glorot(param_init, "attn_bias_v", rng, v_embed_dim, 1)]
        attention_biases = [get_or_create("attn_bias_k", (1, 1, k_embed_dim), inits[0],
                                          fix_parameters),
                            get_or_create("attn_bias_v", (1, 1, v_embed_dim), inits[1],
                                          fix_parameters)]
    return F.multi_head_attention(query, key, value, num_heads, *weights, *biases,
                                  *attention_biases, dropout, additive_mask=additive_mask,
                                  key_padding_mask=key_padding_mask)


def _dropout(x, dropout):
    return F.dropout(x, dropout) if dropout > 0 else x


def _attention_block(x, memory, num_heads, dropout, add_attn_bias, additive_mask,
                     key_padding_mask, attention_name, norm_name):
    """``layer_norm(x + dropout(attention(x, memory, memory)))``."""
    attended = multi_head_attention(x, memory, memory, num_heads=num_heads,
                                    add_attn_bias=add_attn_bias, additive_mask=additive_mask,
                                    key_padding_mask=key_padding_mask, name=attention_name)[0]
    return layer_normalization(x + _dropout(attended, dropout), batch_axis=(0, 1),
                               name=norm_name)


def _feedforward_block(x, embed_dim, dim_feedforward, dropout, activation, prefix, norm_name):
    """``layer_norm(x + dropout(affine2(dropout(activation(affine1(x))))))``."""
    h = activation(affine(x, dim_feedforward, base_axis=2, name=f"{prefix}_affine1"))
    h = affine(_dropout(h, dropout), embed_dim, base_axis=2, name=f"{prefix}_affine2")
    return layer_normalization(x + _dropout(h, dropout), batch_axis=(0, 1), name=norm_name)


@parametric_function_api("transformer_encode", [
    ("src_self_attn", "self-attention parameters", "see multi_head_attention", True),
    ("enc_affine1", "first feed-forward affine", "see affine", True),
    ("enc_affine2", "second feed-forward affine", "see affine", True),
    ("enc_layer_norm1", "layer normalization after attention", "see layer_normalization", True),
    ("enc_layer_norm2", "layer normalization after feed-forward", "see layer_normalization",
     True)])
def transformer_encode(src, embed_dim, num_heads, dim_feedforward=2048, dropout=0.1,
                       activation=None, src_additive_mask=None, src_key_padding_mask=None,
                       rng=None, add_attn_bias=False, fix_parameters=False):
    """One transformer encoder layer (post-norm): self-attention, then feed-forward.

    Args:
        src (~nnabla.Variable): ``(L_S, B, E)``.
        embed_dim (int): ``E``, the output size of the feed-forward block.
        num_heads (int): Number of attention heads.
        dim_feedforward (int): Hidden size of the feed-forward block.
        dropout (float): Dropout ratio after attention and in the feed-forward block.
        activation (callable, optional): Feed-forward nonlinearity (default ``F.relu``).
        src_additive_mask (~nnabla.Variable, optional): ``(L_S, L_S)``.
        src_key_padding_mask (~nnabla.Variable, optional): ``(B, L_S)`` of 0/1.
        rng, fix_parameters: Accepted for nnabla's signature; not passed on (as nnabla).
        add_attn_bias (bool): Give the attention ``attn_bias_k``/``attn_bias_v``.

    Returns:
        ~nnabla.Variable: ``(L_S, B, E)``.
    """
    activation = F.relu if activation is None else activation
    src = _attention_block(src, src, num_heads, dropout, add_attn_bias, src_additive_mask,
                           src_key_padding_mask, "src_self_attn", "enc_layer_norm1")
    return _feedforward_block(src, embed_dim, dim_feedforward, dropout, activation, "enc",
                              "enc_layer_norm2")


@parametric_function_api("transformer_decode", [
    ("tgt_self_attn", "self-attention parameters", "see multi_head_attention", True),
    ("tgt_memory_attn", "attention over the encoder output", "see multi_head_attention", True),
    ("dec_affine1", "first feed-forward affine", "see affine", True),
    ("dec_affine2", "second feed-forward affine", "see affine", True),
    ("dec_layer_norm1", "layer normalization after self-attention", "see layer_normalization",
     True),
    ("dec_layer_norm2", "layer normalization after memory attention",
     "see layer_normalization", True),
    ("dec_layer_norm3", "layer normalization after feed-forward", "see layer_normalization",
     True)])
def transformer_decode(tgt, memory, embed_dim, num_heads, dim_feedforward=2048, dropout=0.1,
                       activation=None, tgt_additive_mask=None, memory_additive_mask=None,
                       tgt_key_padding_mask=None, memory_key_padding_mask=None, rng=None,
                       add_attn_bias=False, fix_parameters=False):
    """One transformer decoder layer (post-norm): self-attention, attention over
    ``memory``, then feed-forward.

    Args:
        tgt (~nnabla.Variable): ``(L_T, B, E)``.
        memory (~nnabla.Variable): Encoder output ``(L_S, B, E)``.
        embed_dim, num_heads, dim_feedforward, dropout, activation, add_attn_bias: As in
            :func:`transformer_encode`.
        tgt_additive_mask (~nnabla.Variable, optional): ``(L_T, L_T)``.
        memory_additive_mask (~nnabla.Variable, optional): ``(L_T, L_S)``.
        tgt_key_padding_mask (~nnabla.Variable, optional): ``(B, L_T)`` of 0/1.
        memory_key_padding_mask (~nnabla.Variable, optional): ``(B, L_S)`` of 0/1.
        rng, fix_parameters: Accepted for nnabla's signature; not passed on (as nnabla).

    Returns:
        ~nnabla.Variable: ``(L_T, B, E)``.
    """
    activation = F.relu if activation is None else activation
    tgt = _attention_block(tgt, tgt, num_heads, dropout, add_attn_bias, tgt_additive_mask,
                           tgt_key_padding_mask, "tgt_self_attn", "dec_layer_norm1")
    tgt = _attention_block(tgt, memory, num_heads, dropout, add_attn_bias,
                           memory_additive_mask, memory_key_padding_mask, "tgt_memory_attn",
                           "dec_layer_norm2")
    return _feedforward_block(tgt, embed_dim, dim_feedforward, dropout, activation, "dec",
                              "dec_layer_norm3")


@parametric_function_api("transformer", [
    ("encoder{layer#}", "parameters of each encoder layer", "see transformer_encode", True),
    ("decoder{layer#}", "parameters of each decoder layer", "see transformer_decode", True)])
def transformer(src, tgt, embed_dim=512, num_heads=8, num_encoder_layers=6,
                num_decoder_layers=6, dim_feedforward=2048, dropout=0.1, activation=None,
                src_additive_mask=None, tgt_additive_mask=None, memory_additive_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, rng=None, add_attn_bias=False,
                fix_parameters=False):
    """Transformer (Vaswani et al., 2017): encoder layers ``encoder00``, ... over ``src``,
    then decoder layers ``decoder00``, ... over ``tgt`` attending to the encoder output.

    Args:
        src (~nnabla.Variable): ``(L_S, B, E)``.
        tgt (~nnabla.Variable): ``(L_T, B, E)``.
        embed_dim (int): ``E``; both inputs must have it as their last size.
        num_encoder_layers, num_decoder_layers (int): Numbers of layers.
        num_heads, dim_feedforward, dropout, activation, rng, add_attn_bias,
            fix_parameters: Passed to every layer.
        *_additive_mask, *_key_padding_mask (~nnabla.Variable, optional): Masks of the
            encoder self-attention (src), decoder self-attention (tgt) and decoder
            attention over the encoder output (memory).

    Returns:
        ~nnabla.Variable: ``(L_T, B, E)``.

    Raises:
        ValueError: ``src`` and ``tgt`` differ in batch size, or their last size is not
            ``embed_dim``.
    """
    if src.shape[1] != tgt.shape[1]:
        raise ValueError(f"PF.transformer: argument 'tgt' has shape {tgt.shape}; expected "
                         f"(..., {src.shape[1]}, ...): src and tgt must share the batch size")
    for argument, x in (("src", src), ("tgt", tgt)):
        if x.shape[2] != embed_dim:
            raise ValueError(f"PF.transformer: argument '{argument}' has shape {x.shape}; "
                             f"expected (..., {embed_dim}): the last size must be embed_dim")
    shared = dict(embed_dim=embed_dim, num_heads=num_heads, dim_feedforward=dim_feedforward,
                  dropout=dropout, activation=activation, rng=rng,
                  add_attn_bias=add_attn_bias, fix_parameters=fix_parameters)
    memory = src
    for i in range(num_encoder_layers):
        memory = transformer_encode(memory, src_additive_mask=src_additive_mask,
                                    src_key_padding_mask=src_key_padding_mask,
                                    name=f"encoder{i:02d}", **shared)
    output = tgt
    for i in range(num_decoder_layers):
        output = transformer_decode(output, memory, tgt_additive_mask=tgt_additive_mask,
                                    memory_additive_mask=memory_additive_mask,
                                    tgt_key_padding_mask=tgt_key_padding_mask,
                                    memory_key_padding_mask=memory_key_padding_mask,
                                    name=f"decoder{i:02d}", **shared)
    return output
