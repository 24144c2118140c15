"""Cases of the normalization functions, with independent numpy references."""
import numpy as np

from .case import Case, Fixed, Int, Normal, Positive

X4 = (4, 3, 2, 2)
C1 = (1, 3, 1, 1)


def standardize(x, keep, eps):
    """(x - mean) / sqrt(biased var + eps) over every axis not in ``keep``."""
    red = tuple(i for i in range(x.ndim) if i not in keep)
    m = x.mean(axis=red, keepdims=True)
    v = ((x - m) ** 2).mean(axis=red, keepdims=True)
    return (x - m) / np.sqrt(v + eps), m, v


def affine(xhat, beta, gamma):
    y = xhat if gamma is None else xhat * gamma
    return y if beta is None else y + beta


def ref_bn(x, beta, gamma, mean, variance, axes=(1,), decay_rate=0.9, eps=1e-5,
           batch_stat=True, no_scale=False, no_bias=False):
    keep = [a % x.ndim for a in axes]
    if batch_stat:
        xhat = standardize(x, keep, eps)[0]
    else:
        xhat = (x - mean) / np.sqrt(variance + eps)
    return affine(xhat, beta, gamma)


def ref_fused_bn(x, beta, gamma, mean, variance, z=None, nonlinearity="relu", **kw):
    y = ref_bn(x, beta, gamma, mean, variance, **kw)
    return np.maximum(y + (0 if z is None else z), 0)


def ref_tn(x, beta, gamma, axes=(1,), eps=1e-5, **kw):
    return affine(standardize(x, list(axes), eps)[0], beta, gamma)


def ref_ln(x, beta, gamma, batch_axis=(0,), eps=1e-5, **kw):
    return affine(standardize(x, list(batch_axis), eps)[0], beta, gamma)


def ref_in(x, beta, gamma, channel_axis=1, batch_axis=(0,), eps=1e-5, **kw):
    return affine(standardize(x, list(batch_axis) + [channel_axis], eps)[0], beta, gamma)


def ref_gn(x, beta, gamma, num_groups=1, channel_axis=1, batch_axis=(0,), eps=1e-5, **kw):
    shape = x.shape[:channel_axis] + (num_groups, -1) + x.shape[channel_axis + 1:]
    xg = x.reshape(shape)
    xhat = standardize(xg, list(batch_axis) + [channel_axis], eps)[0].reshape(x.shape)
    return affine(xhat, beta, gamma)


def ref_ws(w, channel_axis=0, eps=1e-5):
    return standardize(w, [channel_axis % w.ndim], eps)[0]


def ref_norm_normalization(x, p=2.0, axes=None, eps=1e-12):
    axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
    return x / (np.sum(np.abs(x) ** p, axis=axes, keepdims=True) + eps) ** (1.0 / p)


def ref_weight_normalization(w, g, dim=0, eps=1e-12):
    red = tuple(i for i in range(w.ndim) if i != dim)
    shape = [1] * w.ndim
    shape[dim] = -1
    return g.reshape(shape) * w / np.sqrt(np.sum(w ** 2, axis=red, keepdims=True) + eps)


def ref_mean_sub(x, rmean, t, base_axis=1, update_running_mean=True):
    if not update_running_mean:
        return x - rmean
    m = x.reshape((-1,) + rmean.shape).mean(axis=0)
    return x - (rmean + (m - rmean) / (t.reshape(-1)[0] + 1))


BN_IN = [Normal(X4, 2.0, 0.5), Normal(C1), Normal(C1, 0.3, 1.0), Normal(C1), Positive(C1)]
GRAD3 = (0, 1, 2)
LN_P = (1, 3, 2, 2)

CASES = [
    Case("BatchNormalization", BN_IN, {}, ref=ref_bn, grad_inputs=GRAD3),
    Case("BatchNormalization", BN_IN, {"batch_stat": False}, ref=ref_bn, grad_inputs=GRAD3,
         id="running"),
    Case("BatchNormalization", [BN_IN[0], None, None, BN_IN[3], BN_IN[4]],
         {"no_scale": True, "no_bias": True}, ref=ref_bn, grad_inputs=(0,), id="no-affine"),
    Case("BatchNormalization", [BN_IN[0], None, BN_IN[2], None, None],
         {"no_bias": True}, ref=ref_bn, grad_inputs=(0, 2), id="no-running"),
    Case("BatchNormalization", [Normal((3, 2, 4)), Normal((1, 1, 4)), Normal((1, 1, 4)),
                                Normal((1, 1, 4)), Positive((1, 1, 4))],
         {"axes": [-1], "eps": 1e-3}, ref=ref_bn, grad_inputs=GRAD3, id="last-axis"),
    Case("BatchNormalization", [Normal(X4), Normal((4, 3, 1, 1)), Normal((4, 3, 1, 1)),
                                Normal((4, 3, 1, 1)), Positive((4, 3, 1, 1))],
         {"axes": [0, 1]}, ref=ref_bn, grad_inputs=GRAD3, id="two-axes"),
    Case("FusedBatchNormalization", BN_IN + [Normal(X4)], {}, ref=ref_fused_bn,
         grad_inputs=(0, 1, 2, 5), grad_atol=5e-3),
    Case("FusedBatchNormalization", BN_IN, {}, ref=ref_fused_bn, grad_inputs=GRAD3,
         id="no-z", grad_atol=5e-3),
    Case("FusedBatchNormalization", BN_IN + [Normal(X4)], {"batch_stat": False},
         ref=ref_fused_bn, grad_inputs=(0, 1, 2, 5), id="running"),
    Case("TensorNormalization", [Normal(X4), Normal(C1), Normal(C1)], {}, ref=ref_tn),
    Case("TensorNormalization", [Normal(X4), None, None],
         {"axes": [0, 2], "no_scale": True, "no_bias": True}, ref=ref_tn, id="axes02"),
    Case("LayerNormalization", [Normal(X4), Normal(LN_P), Normal(LN_P)], {}, ref=ref_ln),
    Case("LayerNormalization", [Normal(X4), None, Normal(LN_P)], {"no_bias": True},
         ref=ref_ln, id="no-bias"),
    Case("LayerNormalization", [Normal((2, 3, 4)), None, None],
         {"batch_axis": [0, 1], "no_scale": True, "no_bias": True, "eps": 1e-3},
         ref=ref_ln, id="two-batch-axes"),
    Case("InstanceNormalization", [Normal(X4), Normal(C1), Normal(C1)], {}, ref=ref_in),
    Case("InstanceNormalization", [Normal(X4), Normal((4, 3, 1, 1)), Normal((4, 3, 1, 1))], {},
         ref=ref_in, id="per-sample-params"),
    Case("InstanceNormalization", [Normal((2, 2, 3, 3)), None, None],
         {"channel_axis": 3, "no_scale": True, "no_bias": True}, ref=ref_in, id="channel-last"),
    Case("GroupNormalization", [Normal((2, 4, 3)), Normal((1, 4, 1)), Normal((1, 4, 1))],
         {"num_groups": 2}, ref=ref_gn),
    Case("GroupNormalization", [Normal((2, 6, 2, 2)), None, None],
         {"num_groups": 3, "no_scale": True, "no_bias": True}, ref=ref_gn, id="no-affine"),
    Case("WeightStandardization", [Normal((4, 3, 2))], {}, ref=ref_ws),
    Case("WeightStandardization", [Normal((3, 5))], {"channel_axis": -1}, ref=ref_ws,
         id="last-axis"),
    Case("NormNormalization", [Normal((2, 3, 4))], {}, ref=ref_norm_normalization),
    Case("NormNormalization", [Normal((2, 3, 4))], {"p": 3.0, "axes": [1]},
         ref=ref_norm_normalization, id="p3"),
    # The running mean and the count t are updated in place; the harnesses give the
    # kernel copies, so the reference sees the values from before the update.
    Case("MeanSubtraction", [Normal((4, 3, 2)), Normal((3, 2)), Fixed(np.array([2]))], {},
         ref=ref_mean_sub, grad=False),
    Case("MeanSubtraction", [Normal((4, 3, 2)), Normal((2,)), Int((1,), 1, 5)],
         {"base_axis": 2, "update_running_mean": False}, ref=ref_mean_sub, grad_inputs=(0,),
         id="frozen"),
    Case("WeightNormalization", [Normal((3, 2, 4)), Positive((3,))], {},
         ref=ref_weight_normalization),
    Case("WeightNormalization", [Normal((3, 4)), Positive((4,))], {"dim": 1},
         ref=ref_weight_normalization, id="dim1"),
    # Identity forward; the backward is not the forward's gradient (see test_errors).
    Case("ClipGradByValue", [Normal((2, 3)), Fixed(np.full((2, 3), -0.5)),
                             Fixed(np.full((2, 3), 0.5))], ref=lambda x, lo, hi: x, grad=False),
    Case("ClipGradByNorm", [Normal((2, 3))], {"clip_norm": 0.5, "axes": [1]},
         ref=lambda x, **kw: x, grad=False),
]
