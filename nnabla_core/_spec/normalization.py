"""Normalization: batch/layer/instance/group/tensor normalization and gradient clipping.

Functions with an ``output_stat`` option in ``nnabla.functions`` (batch, layer,
instance, group, tensor normalization, weight standardization) return 1 or 3
outputs depending on the ``n_outputs`` the caller passes; their shape rules
take an ``n_outputs`` keyword (default -1: one output) for that.

``beta``/``gamma`` are optional inputs that must agree with ``no_bias``/``no_scale``
(nnabla raises on a mismatch too). ``mean``/``variance`` of batch normalization
are running statistics the forward pass updates in place (``mutates``).
"""
from __future__ import annotations

from .args import check_axes, check_axis
from .base import Arg, FunctionSpec, Input, Needs, Output, prod

CATEGORY = "Normalization"
Y = (Output("y"),)
Y_STATS = (Output("y"), Output("mean"), Output("variance"))
EPS = Arg("eps", "float", 1e-05)
NO_SCALE = Arg("no_scale", "bool", False)
NO_BIAS = Arg("no_bias", "bool", False)
BETA_GAMMA = (Input("beta", optional=True, parameter=True),
              Input("gamma", optional=True, parameter=True))


def _with_stats(spec, x, stat_shape, n_outputs):
    """``(x,)``, or ``(x, stat, stat)`` when the caller asked for 3 outputs."""
    if n_outputs in (-1, 1):
        return (tuple(x),)
    if n_outputs == 3:
        return (tuple(x), stat_shape, stat_shape)
    raise spec.value_error("n_outputs", "1 or 3 (3 with output_stat=True)", n_outputs)


def check_presence(spec, beta, gamma, no_bias, no_scale):
    """Check that beta/gamma are given exactly when ``no_bias``/``no_scale`` are False."""
    for name, shape, absent, flag in (("beta", beta, no_bias, "no_bias"),
                                      ("gamma", gamma, no_scale, "no_scale")):
        if shape is None and not absent:
            raise spec.value_error(name, f"a variable unless {flag}=True", None)
        if shape is not None and absent:
            raise spec.value_error(name, f"None since {flag}=True", f"shape {tuple(shape)}")


def check_affine(spec, beta, gamma, no_bias, no_scale, expected):
    """:func:`check_presence`, and beta/gamma must have shape ``expected``."""
    check_presence(spec, beta, gamma, no_bias, no_scale)
    for name, shape in (("beta", beta), ("gamma", gamma)):
        if shape is not None and tuple(shape) != tuple(expected):
            raise spec.shape_error(name, tuple(expected), shape)


def kept_shape(x, keep):
    """``x`` with every axis not in ``keep`` set to 1."""
    return tuple(s if i in keep else 1 for i, s in enumerate(x))


def _resolver(*names, all_if_none=False):
    """Resolver making the axis arguments ``names`` non-negative (list order kept).

    With ``all_if_none``, an axis list given as None means every axis.
    """
    def resolve(spec, in_shapes, args):
        ndim = len(in_shapes[0])
        out = dict(args)
        for name in names:
            value = args[name]
            if value is None and all_if_none:
                out[name] = tuple(range(ndim))
            elif isinstance(value, tuple):
                out[name] = check_axes(spec, name, value, ndim)
            elif value is not None:
                out[name] = check_axis(spec, name, value, ndim)
        return out
    return resolve


def batch_normalization(spec, x, beta, gamma, mean, variance, z=None, *, axes, decay_rate, eps,
                        batch_stat, no_scale=False, no_bias=False, nonlinearity=None,
                        n_outputs=-1):
    """Shapes of (fused) batch normalization; parameters have x's shape with non-`axes` 1."""
    p = kept_shape(x, axes)
    check_affine(spec, beta, gamma, no_bias, no_scale, p)
    for name, shape in (("mean", mean), ("variance", variance)):
        if shape is None and not batch_stat:
            raise spec.value_error(name, "the running statistics when batch_stat=False", None)
        if shape is not None and tuple(shape) != p:
            raise spec.shape_error(name, p, shape)
    if z is not None and tuple(z) != tuple(x):
        raise spec.shape_error("z", tuple(x), z, why="z is added to the normalised x")
    if n_outputs == 3 and not batch_stat:
        raise spec.value_error("n_outputs", "1 when batch_stat=False", n_outputs,
                               why="batch statistics exist only with batch_stat=True")
    return _with_stats(spec, x, p, n_outputs)


def fused_batch_normalization(spec, x, beta, gamma, mean, variance, z=None, n_outputs=-1,
                              **args):
    return batch_normalization(spec, x, beta, gamma, mean, variance, z, n_outputs=n_outputs,
                               **args)


def tensor_normalization(spec, x, beta, gamma, *, axes, eps, no_scale, no_bias, n_outputs=-1):
    p = kept_shape(x, axes)
    check_affine(spec, beta, gamma, no_bias, no_scale, p)
    return _with_stats(spec, x, p, n_outputs)


def layer_normalization(spec, x, beta, gamma, *, batch_axis, eps, no_scale, no_bias,
                        n_outputs=-1):
    """Parameters: x's shape with the batch axes 1; statistics: only the batch axes."""
    param = tuple(1 if i in batch_axis else s for i, s in enumerate(x))
    check_affine(spec, beta, gamma, no_bias, no_scale, param)
    return _with_stats(spec, x, kept_shape(x, batch_axis), n_outputs)


def _check_apart(spec, channel_axis, batch_axis):
    """The channel axis is not a batch axis (both non-negative, as resolved)."""
    if channel_axis in batch_axis:
        raise spec.value_error("batch_axis", f"axes other than channel_axis {channel_axis}",
                               tuple(batch_axis))


def instance_normalization(spec, x, beta, gamma, *, channel_axis, batch_axis, eps, no_scale,
                           no_bias, n_outputs=-1):
    """Parameters broadcast to (batch axes, channel axis); their channel size must match."""
    _check_apart(spec, channel_axis, batch_axis)
    stat = kept_shape(x, tuple(batch_axis) + (channel_axis,))
    check_presence(spec, beta, gamma, no_bias, no_scale)
    for name, shape in (("beta", beta), ("gamma", gamma)):
        if shape is None:
            continue
        ok = len(shape) == len(x) and all(a in (1, b) for a, b in zip(shape, stat))
        if not ok or shape[channel_axis] != x[channel_axis]:
            raise spec.shape_error(name, f"{stat} or a shape broadcastable to it with "
                                   f"{x[channel_axis]} channels", shape)
    return _with_stats(spec, x, stat, n_outputs)


def group_normalization(spec, x, beta, gamma, *, num_groups, channel_axis, batch_axis, eps,
                        no_scale, no_bias, n_outputs=-1):
    """x's channel axis splits into (num_groups, C/num_groups); stats per (batch, group)."""
    _check_apart(spec, channel_axis, batch_axis)
    c = x[channel_axis]
    if num_groups <= 0 or c % num_groups:
        raise spec.value_error("num_groups", f"a positive divisor of the {c} channels",
                               num_groups)
    check_affine(spec, beta, gamma, no_bias, no_scale, kept_shape(x, (channel_axis,)))
    grouped = tuple(x[:channel_axis]) + (num_groups, c // num_groups) + tuple(x[channel_axis + 1:])
    return _with_stats(spec, x, kept_shape(grouped, tuple(batch_axis) + (channel_axis,)),
                       n_outputs)


def weight_standardization(spec, w, *, channel_axis, eps, n_outputs=-1):
    return _with_stats(spec, w, kept_shape(w, (channel_axis,)), n_outputs)


def same_as_x(spec, x, *rest, **args):
    return (tuple(x),)


def mean_subtraction(spec, x, rmean, t, *, base_axis, update_running_mean):
    if tuple(rmean) != tuple(x[base_axis:]):
        raise spec.shape_error("rmean", tuple(x[base_axis:]), rmean,
                               why=f"the running mean has x.shape[{base_axis}:]")
    if t is None:
        if update_running_mean:
            raise spec.value_error("t", "the running count when update_running_mean=True", None)
    elif prod(t) != 1:
        raise spec.shape_error("t", "a single element", t)
    return (tuple(x),)


def clip_grad_by_value(spec, x, lo, hi, **args):
    for name, shape in (("min", lo), ("max", hi)):
        if len(shape) != len(x) or any(a not in (1, b) for a, b in zip(shape, x)):
            raise spec.shape_error(name, f"{tuple(x)} (or broadcastable to it)", shape)
    return (tuple(x),)


def weight_normalization(spec, w, g, *, dim, eps):
    if tuple(g) != (w[dim],):
        raise spec.shape_error("g", (w[dim],), g, why=f"one scale per index of w's axis {dim}")
    if eps <= 0:
        raise spec.value_error("eps", "a positive value", eps)
    return (tuple(w),)


def _norm(name, snake, inputs, args, outputs, shape, needs, doc, **kw):
    return FunctionSpec(name, snake, CATEGORY, inputs, args, outputs, shape, needs, doc=doc, **kw)


BN_ARGS = (Arg("axes", "ints", (1,)), Arg("decay_rate", "float", 0.9), EPS,
           Arg("batch_stat", "bool", True))
BN_INPUTS = (Input("x"), *BETA_GAMMA, Input("mean", optional=True, parameter=True),
             Input("variance", optional=True, parameter=True))
BN_NEEDS = Needs(inputs=("x", "gamma", "mean", "variance"))
BATCH_AXIS = Arg("batch_axis", "ints", (0,))
X_BG = (Input("x"), *BETA_GAMMA)
NEEDS_X_GAMMA = Needs(inputs=("x", "gamma"))

SPECS = [
    _norm("BatchNormalization", "batch_normalization", BN_INPUTS,
          BN_ARGS + (NO_SCALE, NO_BIAS), Y_STATS, batch_normalization, BN_NEEDS,
          "Batch normalization over every axis but `axes`; updates the running stats.",
          mutates=("mean", "variance"), resolve_args=_resolver("axes")),
    _norm("FusedBatchNormalization", "fused_batch_normalization",
          (Input("x"), Input("beta", parameter=True), Input("gamma", parameter=True),
           Input("mean", parameter=True), Input("variance", parameter=True),
           Input("z", optional=True)),
          BN_ARGS + (Arg("nonlinearity", "str", "relu", choices=("relu",)),), Y_STATS,
          fused_batch_normalization, Needs(inputs=("x", "gamma", "mean", "variance"),
                                           outputs=("y",)),
          "relu(batch_normalization(x) + z).", mutates=("mean", "variance"),
          resolve_args=_resolver("axes")),
    _norm("LayerNormalization", "layer_normalization", X_BG, (BATCH_AXIS, EPS, NO_SCALE, NO_BIAS),
          Y_STATS, layer_normalization, NEEDS_X_GAMMA,
          "Normalise each sample over every axis but `batch_axis`, then y = x̂ γ + β.",
          resolve_args=_resolver("batch_axis")),
    _norm("InstanceNormalization", "instance_normalization", X_BG,
          (Arg("channel_axis", "int", 1), BATCH_AXIS, EPS, NO_SCALE, NO_BIAS), Y_STATS,
          instance_normalization, NEEDS_X_GAMMA,
          "Normalise each (sample, channel) over the remaining axes.",
          resolve_args=_resolver("channel_axis", "batch_axis")),
    _norm("GroupNormalization", "group_normalization", X_BG,
          (Arg("num_groups", "int", 1), Arg("channel_axis", "int", 1), BATCH_AXIS, EPS,
           NO_SCALE, NO_BIAS), Y_STATS, group_normalization, NEEDS_X_GAMMA,
          "Normalise each (sample, channel group); γ and β are per channel.",
          resolve_args=_resolver("channel_axis", "batch_axis")),
    _norm("TensorNormalization", "tensor_normalization", X_BG,
          (Arg("axes", "ints", (1,)), EPS, NO_SCALE, NO_BIAS), Y_STATS, tensor_normalization,
          NEEDS_X_GAMMA, "Normalise over every axis but `axes` with the input's own statistics.",
          resolve_args=_resolver("axes")),
    _norm("WeightStandardization", "weight_standardization", (Input("w"),),
          (Arg("channel_axis", "int", 0), EPS), Y_STATS, weight_standardization,
          Needs(inputs=("w",)), "Standardise w per output channel (mean 0, variance 1).",
          resolve_args=_resolver("channel_axis")),
    _norm("NormNormalization", "norm_normalization", (Input("x"),),
          (Arg("p", "float", 2.0), Arg("axes", "ints?", None), Arg("eps", "float", 1e-12)), Y,
          same_as_x, Needs(inputs=("x",)),
          "y = x / (sum_{axes} |x|^p + eps)^(1/p).",
          resolve_args=_resolver("axes", all_if_none=True)),
    _norm("MeanSubtraction", "mean_subtraction",
          (Input("x"), Input("rmean", parameter=True), Input("t", optional=True, integer=True)),
          (Arg("base_axis", "int", 1), Arg("update_running_mean", "bool", True)), Y,
          mean_subtraction, Needs(inputs=("t",)),
          "y = x - running mean over the batch axes before `base_axis`.",
          mutates=("rmean", "t"), resolve_args=_resolver("base_axis")),
    _norm("ClipGradByValue", "clip_grad_by_value", (Input("x"), Input("min"), Input("max")),
          (), Y, clip_grad_by_value, Needs(inputs=("min", "max")),
          "Identity forward; backward clips the gradient to [min, max] element-wise."),
    _norm("ClipGradByNorm", "clip_grad_by_norm", (Input("x"),),
          (Arg("clip_norm", "float", 1.0), Arg("axes", "ints?", None)), Y, same_as_x, Needs(),
          "Identity forward; backward rescales the gradient to norm `clip_norm` over `axes`.",
          resolve_args=_resolver("axes", all_if_none=True)),
    _norm("WeightNormalization", "weight_normalization", (Input("w"), Input("g")),
          (Arg("dim", "int", 0), Arg("eps", "float", 1e-12)), (Output("w_wn"),),
          weight_normalization, Needs(inputs=("w", "g")),
          "w_wn = g w / sqrt(sum_{axes != dim} w^2 + eps).", resolve_args=_resolver("dim")),
]
