"""Parametric functions (``nnabla.parametric_functions``, usually imported as ``PF``).

A parametric function creates its parameters on first call, in the current parameter
scope under its own scope name (``affine``, ``conv``, ``deconv``, ``depthwise_conv``,
``bn``, ...), reuses them on later calls, and calls the matching ``F`` function. Each
takes ``name=`` to open an extra scope, and ``fix_parameters=True`` to get its
parameters with ``need_grad=False`` (they stay registered with ``need_grad=True``).

Example:
    >>> import nnabla as nn
    >>> import nnabla.parametric_functions as PF
    >>> nn.clear_parameters()
    >>> x = nn.Variable((2, 3, 4))
    >>> y = PF.affine(x, 5, name="fc")
    >>> {k: v.shape for k, v in nn.get_parameters().items()}
    {'fc/affine/W': (12, 5), 'fc/affine/b': (5,)}
    >>> nn.clear_parameters()
"""

from ._parametric.api import parametric_function_api
from ._parametric.binary import (
    binary_connect_affine,
    binary_connect_convolution,
    binary_weight_affine,
    binary_weight_convolution,
    inq_affine,
    inq_convolution,
)
from ._parametric.decomposed import cpd3_convolution, svd_affine, svd_convolution
from ._parametric.layers import (
    affine,
    convolution,
    deconvolution,
    deformable_convolution,
    depthwise_convolution,
    depthwise_deconvolution,
    embed,
    prelu,
)
from ._parametric.normalization import (
    _spectral_norm_v1,  # noqa: F401 (private, as nnabla ships it: the composite reference)
    batch_normalization,
    fused_batch_normalization,
    group_normalization,
    instance_normalization,
    layer_normalization,
    mean_subtraction,
    spectral_norm,
    sync_batch_normalization,
    weight_normalization,
)
from ._parametric.quantized import (
    fixed_point_quantized_affine,
    fixed_point_quantized_convolution,
    min_max_quantize,
    min_max_quantized_affine,
    min_max_quantized_convolution,
    pow2_quantized_affine,
    pow2_quantized_convolution,
    pruned_affine,
    pruned_convolution,
)
from ._parametric.recurrent import LSTMCell, gru, lstm, lstm_cell, rnn
from ._parametric.transformer import (
    multi_head_attention,
    transformer,
    transformer_decode,
    transformer_encode,
)
from .initializer import (
    ConstantInitializer,
    NormalInitializer,
    UniformInitializer,
    WeightNormalizationScaleInitializer,
    calc_uniform_lim_glorot,
)
from .parameter import get_parameter, get_parameter_or_create

__all__ = [
    "ConstantInitializer",
    "LSTMCell",
    "NormalInitializer",
    "UniformInitializer",
    "WeightNormalizationScaleInitializer",
    "affine",
    "batch_normalization",
    "binary_connect_affine",
    "binary_connect_convolution",
    "binary_weight_affine",
    "binary_weight_convolution",
    "calc_uniform_lim_glorot",
    "convolution",
    "cpd3_convolution",
    "deconvolution",
    "deformable_convolution",
    "depthwise_convolution",
    "depthwise_deconvolution",
    "embed",
    "fixed_point_quantized_affine",
    "fixed_point_quantized_convolution",
    "fused_batch_normalization",
    "get_parameter",
    "get_parameter_or_create",
    "group_normalization",
    "gru",
    "inq_affine",
    "inq_convolution",
    "instance_normalization",
    "layer_normalization",
    "lstm",
    "lstm_cell",
    "mean_subtraction",
    "multi_head_attention",
    "min_max_quantize",
    "min_max_quantized_affine",
    "min_max_quantized_convolution",
    "parametric_function_api",
    "pow2_quantized_affine",
    "pow2_quantized_convolution",
    "prelu",
    "pruned_affine",
    "pruned_convolution",
    "rnn",
    "spectral_norm",
    "svd_affine",
    "svd_convolution",
    "sync_batch_normalization",
    "transformer",
    "transformer_decode",
    "transformer_encode",
    "weight_normalization",
]
