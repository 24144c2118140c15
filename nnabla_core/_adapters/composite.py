"""``F.*`` members that are compositions of other ``F`` calls, or helpers nnabla's
``functions`` module re-exports: ``multi_head_attention``, ``dot``,
``BatchNormalizationInOutAdapter``, ``function_api``, ``get_auto_forward`` and
``get_current_context``.

None of these has a function type of its own: the graph they build holds only the
functions they call. ``nnabla.functions`` is imported where it is used, because it
imports this module while it is being built.
"""
from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np

from nnabla._nd_array import NdArray
from nnabla._variable import Variable
from nnabla.auto_forward import get_auto_forward
from nnabla.context import get_current_context

__all__ = ["multi_head_attention", "dot", "BatchNormalizationInOutAdapter", "function_api",
           "get_auto_forward", "get_current_context"]


def _shape_error(api, argument, given, expected, why):
    return ValueError(f"{api}: argument '{argument}' has shape {tuple(given)}; expected "
                      f"{expected}: {why}")


def _attention_dims(query, key, value, num_heads, q_weight, k_weight, v_weight):
    """Checks the shapes of multi_head_attention; returns (head_dim, head_vdim)."""
    api = "F.multi_head_attention"
    if key.shape[0] != value.shape[0]:
        raise _shape_error(api, "value", value.shape, f"({key.shape[0]}, ...)",
                           "key and value must have the same source length")
    q_embed_dim, k_embed_dim, v_embed_dim = (w.shape[1] for w in (q_weight, k_weight, v_weight))
    if q_embed_dim != k_embed_dim:
        raise _shape_error(api, "k_weight", k_weight.shape, f"(..., {q_embed_dim})",
                           "query and key must share the embedding dimension")
    for argument, weight, dim in (("q_weight", q_weight, q_embed_dim),
                                  ("v_weight", v_weight, v_embed_dim)):
        if dim % num_heads:
            raise _shape_error(api, argument, weight.shape, f"(..., a multiple of {num_heads})",
                               f"the embedding dimension must divide into num_heads={num_heads}")
    return q_embed_dim // num_heads, v_embed_dim // num_heads


def _append_attention_bias(k, v, attn_bias_k, attn_bias_v, additive_mask, key_padding_mask):
    """Appends the learned bias key/value as one more source position (masks get a 0)."""
    from nnabla import functions as F
    if attn_bias_v is None:
        raise ValueError("F.multi_head_attention: argument 'attn_bias_v' is None; expected a "
                         "Variable, since 'attn_bias_k' is given")
    batch_size = k.shape[1]
    bias_k = F.broadcast(F.reshape(attn_bias_k, (1, 1, k.shape[2])), (1, batch_size, k.shape[2]))
    bias_v = F.broadcast(F.reshape(attn_bias_v, (1, 1, v.shape[2])), (1, batch_size, v.shape[2]))
    k = F.concatenate(k, bias_k, axis=0)
    v = F.concatenate(v, bias_v, axis=0)
    if additive_mask is not None:
        additive_mask = F.pad(additive_mask, (0, 1))
    if key_padding_mask is not None:
        key_padding_mask = F.pad(key_padding_mask, (0, 1))
    return k, v, additive_mask, key_padding_mask


def _split_heads(x, batch_heads, head_dim):
    """(L, B, H*d) -> (B*H, L, d)."""
    from nnabla import functions as F
    return F.transpose(F.reshape(x, (-1, batch_heads, head_dim)), (1, 0, 2))


def _mask_padded_keys(weights, key_padding_mask, num_heads):
    """Sets the scores of keys where ``key_padding_mask`` is nonzero to -inf."""
    from nnabla import functions as F
    batch_heads, tgt_len, src_len = weights.shape
    batch_size = batch_heads // num_heads
    per_batch = (batch_size, num_heads, tgt_len, src_len)
    condition = F.broadcast(F.reshape(key_padding_mask, (batch_size, 1, 1, src_len)), per_batch)
    masked = F.where(condition, F.constant(val=float("-inf"), shape=per_batch),
                     F.reshape(weights, per_batch))
    return F.reshape(masked, weights.shape)


def multi_head_attention(query, key, value, num_heads, q_weight, k_weight, v_weight,
                         out_weight, q_bias=None, k_bias=None, v_bias=None, out_bias=None,
                         attn_bias_k=None, attn_bias_v=None, dropout=0.0, additive_mask=None,
                         key_padding_mask=None):
    """Multi-head scaled dot-product attention (Vaswani et al., 2017), built from ``F`` calls.

    With ``L_T``/``L_S`` the target/source lengths, ``B`` the batch size and ``H`` heads:
    ``q = query·q_weight + q_bias`` (likewise ``k``, ``v``), split into heads of size
    ``E/H``; ``w = softmax(q·kᵀ/sqrt(E/H) + additive_mask)`` with keys where
    ``key_padding_mask`` is 1 set to -inf; ``y = concat_heads(dropout(w)·v)·out_weight +
    out_bias``. ``attn_bias_k``/``attn_bias_v`` append one learned key/value position.

    Args:
        query (~nnabla.Variable): ``(L_T, B, D_q)``.
        key (~nnabla.Variable): ``(L_S, B, D_k)``.
        value (~nnabla.Variable): ``(L_S, B, D_v)``.
        num_heads (int): Number of heads; must divide ``E`` and ``E_v``.
        q_weight, k_weight (~nnabla.Variable): ``(D_q, E)``, ``(D_k, E)``.
        v_weight (~nnabla.Variable): ``(D_v, E_v)``.
        out_weight (~nnabla.Variable): ``(E_v, E_out)``.
        q_bias, k_bias, v_bias, out_bias (~nnabla.Variable, optional): ``(E,)``, ``(E,)``,
            ``(E_v,)``, ``(E_out,)``.
        attn_bias_k, attn_bias_v (~nnabla.Variable, optional): ``E`` and ``E_v`` elements.
        dropout (float): Dropout ratio applied to the attention weights.
        additive_mask (~nnabla.Variable, optional): ``(L_T, L_S)``, added to the scores.
        key_padding_mask (~nnabla.Variable, optional): ``(B, L_S)`` of 0/1; 1 ignores a key.

    Returns:
        tuple of ~nnabla.Variable: ``y`` ``(L_T, B, E_out)`` and the attention weights
        ``(B*H, L_T, L_S)`` (after dropout).

    Raises:
        ValueError: On inconsistent shapes.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((3, 2, 4), np.float32))
        >>> w = nn.Variable.from_numpy_array(np.eye(4, dtype=np.float32))
        >>> y, a = F.multi_head_attention(x, x, x, 2, w, w, w, w)
        >>> y.forward(); y.shape, a.shape
        ((3, 2, 4), (4, 3, 3))
    """
    from nnabla import functions as F
    head_dim, head_vdim = _attention_dims(query, key, value, num_heads, q_weight, k_weight,
                                          v_weight)
    tgt_len, batch_size = query.shape[:2]
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (batch_size,
                                                                          key.shape[0]):
        raise _shape_error("F.multi_head_attention", "key_padding_mask", key_padding_mask.shape,
                           (batch_size, key.shape[0]), "one flag per batch sample and key")
    q = F.affine(query, q_weight, q_bias, base_axis=2) * float(head_dim) ** -0.5
    k = F.affine(key, k_weight, k_bias, base_axis=2)
    v = F.affine(value, v_weight, v_bias, base_axis=2)
    if attn_bias_k is not None:
        k, v, additive_mask, key_padding_mask = _append_attention_bias(
            k, v, attn_bias_k, attn_bias_v, additive_mask, key_padding_mask)
    batch_heads = batch_size * num_heads
    q, k = _split_heads(q, batch_heads, head_dim), _split_heads(k, batch_heads, head_dim)
    v = _split_heads(v, batch_heads, head_vdim)
    weights = F.batch_matmul(q, k, transpose_b=True)          # (B*H, L_T, L_S)
    if additive_mask is not None:
        weights = weights + F.reshape(additive_mask, (1,) + tuple(additive_mask.shape))
    if key_padding_mask is not None:
        weights = _mask_padded_keys(weights, key_padding_mask, num_heads)
    weights = F.softmax(weights, axis=2)
    if dropout > 0:
        weights = F.dropout(weights, p=dropout)
    heads = F.batch_matmul(weights, v)                        # (B*H, L_T, head_vdim)
    joined = F.reshape(F.transpose(heads, (1, 0, 2)), (tgt_len, batch_size, v_weight.shape[1]))
    return F.affine(joined, out_weight, out_bias, base_axis=2), weights


def _host_data(x):
    """``(numpy data, True)`` for a Variable or NdArray, ``(x, False)`` otherwise."""
    if isinstance(x, NdArray):
        return x.data, True
    if isinstance(x, Variable):
        return x.d, True
    return x, False


def _dot_arrays(a, b):
    """numpy.dot's cases for two nnabla arrays, as F calls."""
    from nnabla import functions as F
    if a.ndim == 0 or b.ndim == 0:
        scalar, other = (a, b) if a.ndim == 0 else (b, a)
        result = F.mul_scalar(other, float(_host_data(scalar)[0]))
        if isinstance(scalar, NdArray) and isinstance(other, Variable):
            result.forward()   # as nnabla: an NdArray scalar times a Variable gives data
            result = result.data
        return result
    if a.ndim == 1 and b.ndim == 1:
        # one matrix product (BLAS): it rounds less than a float32 sum of the products
        return F.reshape(F.affine(F.reshape(a, (1, -1)), F.reshape(b, (-1, 1))), ())
    if a.ndim == 2 and b.ndim == 2:
        return F.affine(a, b)
    if b.ndim == 1:
        h = F.affine(a, F.reshape(b, (-1, 1)), base_axis=a.ndim - 1)
        return F.reshape(h, h.shape[:-1])
    # sum over a's last axis and b's second-to-last: move that axis of b to the front
    axes = list(range(b.ndim))
    axes.insert(0, axes.pop(b.ndim - 2))
    return F.affine(a, F.transpose(b, axes), base_axis=a.ndim - 1)


def dot(a, b, out=None):
    """``numpy.dot`` for nnabla arrays: inner product, matrix product, or a sum product over
    the last axis of ``a`` and the second-to-last of ``b``.

    If neither argument is a Variable/NdArray, ``numpy.dot`` is applied to both; with one of
    them, the other must be a scalar (the product scales the array).

    Args:
        a (~nnabla.Variable, ~nnabla.NdArray or scalar): Left operand.
        b (~nnabla.Variable, ~nnabla.NdArray or scalar): Right operand.
        out (~nnabla.Variable or ~nnabla.NdArray, optional): Receives the result; it must
            have the result's type, shape and dtype. A Variable is rewired onto the result.

    Returns:
        ~nnabla.Variable or ~nnabla.NdArray: The product, or None when ``out`` is given.

    Raises:
        TypeError: one operand is an nnabla array and the other neither one nor a scalar.
        ValueError: ``out`` differs from the result in type, shape or dtype.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
        >>> b = nn.NdArray.from_numpy_array(np.ones(3, np.float32))
        >>> F.dot(a, b).data.tolist()
        [3.0, 12.0]
    """
    a_is_array, b_is_array = _host_data(a)[1], _host_data(b)[1]
    if a_is_array and b_is_array:
        result = _dot_arrays(a, b)
    elif a_is_array or b_is_array:
        name, other = ("b", b) if a_is_array else ("a", a)
        if not isinstance(other, numbers.Number):
            raise TypeError(f"F.dot: argument '{name}' is of type {type(other).__name__}; "
                            "expected a Variable, an NdArray or a scalar (the other operand "
                            "is an nnabla array)")
        result = a * b     # what numpy.dot gives nnabla, which treats our arrays as scalars
    else:
        result = np.dot(a, b)
    if out is None:
        return result
    out_data, result_data = _host_data(out)[0], _host_data(result)[0]
    if type(out) is not type(result) or out_data.shape != result_data.shape or \
            out_data.dtype != result_data.dtype:
        raise ValueError("F.dot: argument 'out' must have the same type, shape and dtype as "
                         f"the result ({type(result).__name__}, {result_data.shape}, "
                         f"{result_data.dtype}); given {type(out).__name__}, "
                         f"{out_data.shape}, {out_data.dtype}")
    if isinstance(out, NdArray):
        out.cast(result.data.dtype)[...] = result.data
    elif isinstance(out, Variable):
        out.rewire_on(result)
    return None


class BatchNormalizationInOutAdapter:
    """Moves the reduction ``axes`` of an ``ndim``-D array last and flattens them into one.

    ``adapter(x)`` returns ``x`` transposed to (outer axes..., inner axes...) and reshaped to
    (outer shape..., prod(inner shape)); ``adapter.inv(y)`` undoes it. One adapter serves
    arrays of one shape.

    Args:
        ndim (int): Number of dimensions of the arrays.
        axes (list of int): Axes to move last and flatten; not exactly one.

    Raises:
        ValueError: ``axes`` has one element, or a later call gets another shape.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> adapter = F.BatchNormalizationInOutAdapter(4, [0, 2])
        >>> x = nn.NdArray.from_numpy_array(np.zeros((2, 3, 4, 5), np.float32))
        >>> y = adapter(x); y.shape, adapter.inv(y).shape
        ((3, 5, 8), (2, 3, 4, 5))
    """

    def __init__(self, ndim, axes):
        if len(axes) == 1:
            raise ValueError(f"F.BatchNormalizationInOutAdapter: argument 'axes' is {axes!r}; "
                             "expected zero or several axes (one axis needs no adapter)")
        self.ndim = ndim
        self.axes = axes
        self.outer_axes = sorted(set(range(ndim)).difference(axes))
        self.transpose_axes = self.outer_axes + sorted(axes)
        self.transposed_shape = None
        self.inv_transpose_axes = np.argsort(self.transpose_axes).tolist()

    def __call__(self, x):
        from nnabla import functions as F
        transposed = F.transpose(x, self.transpose_axes)
        if self.transposed_shape is not None and self.transposed_shape != transposed.shape:
            raise ValueError("F.BatchNormalizationInOutAdapter: input transposed to shape "
                             f"{transposed.shape}; expected {self.transposed_shape}, the shape "
                             "of the first call")
        self.transposed_shape = transposed.shape
        outer = list(transposed.shape[:len(self.outer_axes)])
        inner = int(np.prod(transposed.shape[len(self.outer_axes):], dtype=np.int64))
        return F.reshape(transposed, outer + [inner])

    def inv(self, y):
        """Reshapes and transposes ``y`` back to the layout of the adapter's input."""
        from nnabla import functions as F
        return F.transpose(F.reshape(y, self.transposed_shape), self.inv_transpose_axes)


_FUNCTION_API_NOTE = """

    Note:
        All nnabla functions in :obj:`nnabla.functions` are decorated with the
        :obj:`nnabla.function_bases.function_api` decorator, which queries the current
        context and passes it into the first argument of the original function. The
        original function always takes a context as the first argument.

"""


def function_api(func):
    """Decorator: calls ``func(ctx, ...)`` with the current context as ``ctx``.

    The result takes ``func``'s arguments without ``ctx``, which ``inspect.signature``
    shows; ``__function_api_base__`` holds ``func``.

    Args:
        func (callable): A function whose first argument is named ``ctx``.

    Returns:
        callable: The wrapped function.

    Raises:
        ValueError: ``func``'s first argument is not ``ctx``.

    Example:
        >>> import nnabla.functions as F
        >>> @F.function_api
        ... def backend(ctx, scale=1):
        ...     return ctx.backend, scale
        >>> backend(scale=2)[1]
        2
    """
    signature = inspect.signature(func)
    params = list(signature.parameters.values())
    if not params or params[0].name != "ctx":
        raise ValueError(f"function_api: {func.__name__}{signature} must take 'ctx' as its "
                         "first argument")

    @functools.wraps(func)
    def with_context(*args, **kwargs):
        return func(get_current_context(), *args, **kwargs)

    del with_context.__wrapped__    # the signature shown is the one without ctx
    with_context.__signature__ = signature.replace(parameters=params[1:])
    with_context.__doc__ = (func.__doc__ or "No docstring.") + _FUNCTION_API_NOTE
    with_context.__function_api_base__ = func
    return with_context
