"""Cases of the quantization layers.

Straight-through backward rules are not derivatives of the forward, so those cases have
grad=False (or check only inputs with a true gradient, e.g. x and bias of the binary
layers); ``test_errors_quantization.py`` checks the STE rules against formulas.
"""
import numpy as np
from .case import Case, Fixed, Int, Normal, Uniform


def _binarize(w, zero_to):
    return np.where(w > 0, 1.0, np.where(w < 0, -1.0, zero_to))


def _affine(x, w, b, base_axis):
    m = int(np.prod(x.shape[:base_axis]))
    y = x.reshape(m, -1) @ w.reshape(w.shape[0], -1)
    y = y + (0 if b is None else b.reshape(1, -1))
    return y.reshape(x.shape[:base_axis] + w.shape[1:])


def _conv2d(x, w, b, pad, stride, dilation, group):
    """Direct 2-D convolution, (N, C, H, W) with grouped weights (O, C/G, KH, KW)."""
    n, _, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    per = o // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dilation[0]:i * dilation[0] + (oh - 1) * stride[0] + 1:
                           stride[0], j * dilation[1]:j * dilation[1] + (ow - 1) * stride[1] + 1:
                           stride[1]]
                y[:, g * per:(g + 1) * per] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * per:(g + 1) * per, :, i, j])
    return y + (0 if b is None else b.reshape(1, -1, 1, 1))


def _bc_affine(x, w, wb, b=None, base_axis=1, quantize_zero_to=1.0):
    return _affine(x, _binarize(w, quantize_zero_to), b, base_axis)


def _bw_affine(x, w, wb, alpha, b=None, base_axis=1, quantize_zero_to=1.0):
    w2 = w.reshape(w.shape[0], -1)
    wq = _binarize(w2, quantize_zero_to) * np.abs(w2).mean(axis=0)
    return _affine(x, wq.reshape(w.shape), b, base_axis)


def _conv_args(pad, stride, dilation):
    return (pad or (0, 0), stride or (1, 1), dilation or (1, 1))


def _bc_conv(x, w, wb, b=None, base_axis=1, pad=None, stride=None, dilation=None, group=1,
             quantize_zero_to=1.0):
    return _conv2d(x, _binarize(w, quantize_zero_to), b, *_conv_args(pad, stride, dilation),
                   group)


def _bw_conv(x, w, wb, alpha, b=None, base_axis=1, pad=None, stride=None, dilation=None,
             group=1, quantize_zero_to=1.0):
    scale = np.abs(w).reshape(w.shape[0], -1).mean(axis=1).reshape(-1, 1, 1, 1)
    wq = _binarize(w, quantize_zero_to) * scale
    return _conv2d(x, wq, b, *_conv_args(pad, stride, dilation), group)


def _pow2_weights(w, fixed, num_bits):
    """INQ quantization written from its definition: powers of two in [2^n2, 2^n1]."""
    top = np.abs(w).max()
    n1 = np.floor(np.log2(top)) + (np.log2(top) - np.floor(np.log2(top)) >= np.log2(1.5))
    n2 = n1 + 1 - 2 ** (num_bits - 2)
    out = w.copy()
    for idx in zip(*np.nonzero(fixed == 1)):
        v = w[idx]
        if abs(v) < 2.0 ** (n2 - 1):
            out[idx] = 0.0
            continue
        b = np.log2(abs(v))
        e = min(max(np.floor(b) + (b - np.floor(b) >= np.log2(1.5)), n2), n1)
        out[idx] = np.sign(v) * 2.0 ** e
    return out


def _inq_affine(x, w, ind, b=None, base_axis=1, num_bits=4, inq_iterations=(),
                selection_algorithm="largest_abs", seed=-1):
    if inq_iterations and inq_iterations[-1] == 0:
        ind = np.ones_like(ind)
    return _affine(x, _pow2_weights(w, ind, num_bits), b, base_axis)


def _inq_conv(x, w, ind, b=None, base_axis=1, pad=None, stride=None, dilation=None, group=1,
              num_bits=4, inq_iterations=(), selection_algorithm="largest_abs", seed=-1):
    return _conv2d(x, _pow2_weights(w, ind, num_bits), b, *_conv_args(pad, stride, dilation),
                   group)


def _fixed_point(x, sign=True, n=8, delta=0.0625, ste_fine_grained=True):
    hi = ((1 << (n - 1)) - 1) * delta if sign else ((1 << n) - 1) * delta
    lo = -hi if sign else 0.0
    q = np.sign(x) * np.floor(np.abs(x) / delta + 0.5) * delta
    return np.where(x > hi, hi, np.where(x < lo, lo, q))


def _pow2(x, sign=True, with_zero=True, n=8, m=1, ste_fine_grained=True):
    bits = n - sign - with_zero
    p_max, p_min = 2.0 ** m, 2.0 ** (m - (2 ** bits - 1))
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        q = 2.0 ** np.round(np.log2(abs(v))) if v != 0 else 0.0
        if q > p_max:
            q = p_max
        elif q < p_min:
            q = p_min if not with_zero or abs(v) >= p_min * 2 ** -0.5 else 0.0
        if v < 0:
            q = -q if sign else (0.0 if with_zero else p_min)
        out[i] = q
    return out


def _prune(x, rate=0.9):
    a = np.sort(np.abs(x).ravel())
    t = a[int((a.size - 1) * rate)] + (1.0 if rate == 1.0 else 0.0)
    return np.where(np.abs(x) < t, 0.0, x)


def _half_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def _quantize_linear(x, scale, zp, round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False,
                     dtype=1):
    lo, hi = (-128, 127) if dtype == 1 else (0, 255)
    r = _half_away if round_mode == "HALF_AWAY_FROM_ZERO" else np.round
    zp = np.clip(_half_away(zp), lo, hi)
    return np.clip(r(x / scale) + zp, lo + narrow_range, hi)


def _min_max(x, qr_min, qr_max, ql_min, ql_max, decay=0.999, x_min_max=False, ema=False,
             ste_fine_grained=True, eps=0.01):
    axes = tuple(i for i, s in enumerate(qr_min.shape) if s == 1)
    if x_min_max:
        mn, mx = x.min(axes, keepdims=True), x.max(axes, keepdims=True)
        qr_min = decay * qr_min + (1 - decay) * mn if ema else mn
        qr_max = decay * qr_max + (1 - decay) * mx if ema else mx
    qr_max = np.maximum(qr_max, qr_min + eps)
    scale = (qr_max - qr_min) / (ql_max - ql_min)
    zp = np.clip(_half_away(ql_min - qr_min / scale), ql_min, ql_max)
    lo, hi = (ql_min - zp) * scale, (ql_max - zp) * scale
    return _half_away((np.clip(x, lo, hi) - lo) / scale) * scale + lo


X = (2, 3, 4)
CONV = {"pad": (1, 0), "stride": (1, 2), "dilation": (2, 1), "group": 2}
W_ZERO = np.array([[0.0, 1.5, -2.0], [0.7, 0.0, -0.3]] * 6)
Q = (1, 3, 1)


def _minmax_inputs(qmin=-0.5, qmax=0.5):
    return [Normal((4, 3, 5)), Uniform(Q, qmin - 0.5, qmin), Uniform(Q, qmax, qmax + 0.5),
            Fixed(np.zeros(Q)), Fixed(np.full(Q, 255.0))]


CASES = [
    Case("BinarySigmoid", [Normal(X, 2)], ref=lambda x: (x > 0).astype(float), grad=False),
    Case("BinaryTanh", [Normal(X, 2)], ref=lambda x: np.where(x > 0, 1.0, -1.0), grad=False),
    Case("BinaryConnectAffine", [Normal(X), Normal((12, 2, 3)), Fixed(np.zeros((12, 2, 3))),
                                 Normal((2, 3))], ref=_bc_affine, grad_inputs=(0, 3)),
    Case("BinaryConnectAffine", [Normal(X), Fixed(W_ZERO.reshape(4, 9)),
                                 Fixed(np.zeros((4, 9))), None],
         {"base_axis": 2, "quantize_zero_to": 0.0}, ref=_bc_affine, grad_inputs=(0,),
         id="zero-to-0-base2"),
    Case("BinaryConnectConvolution", [Normal((2, 4, 7, 6)), Normal((6, 2, 3, 2)),
                                      Fixed(np.zeros((6, 2, 3, 2))), Normal((6,))], CONV,
         ref=_bc_conv, grad_inputs=(0, 3)),
    Case("BinaryWeightAffine", [Normal(X), Normal((12, 5)), Fixed(np.zeros((12, 5))),
                                Fixed(np.zeros(5)), Normal((5,))],
         ref=_bw_affine, grad_inputs=(0, 4)),
    Case("BinaryWeightAffine", [Normal(X), Fixed(W_ZERO.reshape(12, 3)),
                                Fixed(np.zeros((12, 3))), Fixed(np.zeros(3)), None],
         {"quantize_zero_to": -1.0}, ref=_bw_affine, grad_inputs=(0,), id="zero-to-minus1"),
    Case("BinaryWeightConvolution", [Normal((2, 4, 7, 6)), Normal((6, 2, 3, 2)),
                                     Fixed(np.zeros((6, 2, 3, 2))), Fixed(np.zeros(6)), None],
         CONV, ref=_bw_conv, grad_inputs=(0,)),
    Case("INQAffine", [Normal(X), Normal((12, 5)), Int((12, 5), 0, 2), Normal((5,))],
         {"num_bits": 3, "seed": 1}, ref=_inq_affine, grad_inputs=(0, 3)),
    Case("INQAffine", [Normal(X), Normal((4, 4)), Int((4, 4), 0, 2), None],
         {"base_axis": 2, "inq_iterations": (0,), "seed": 1}, ref=_inq_affine,
         grad_inputs=(0,), id="fix-all"),
    Case("INQConvolution", [Normal((2, 4, 7, 6)), Normal((6, 2, 3, 2)),
                            Int((6, 2, 3, 2), 0, 2), Normal((6,))], {**CONV, "seed": 1},
         ref=_inq_conv, grad_inputs=(0, 3)),
    Case("FixedPointQuantize", [Normal(X, 2)], ref=_fixed_point, grad=False),
    Case("FixedPointQuantize", [Normal(X, 2)], {"sign": False, "n": 3, "delta": 0.25},
         ref=_fixed_point, grad=False, id="unsigned-3bit"),
    Case("Pow2Quantize", [Normal(X, 2)], ref=_pow2, grad=False),
    Case("Pow2Quantize", [Normal(X, 2)], {"sign": False, "with_zero": False, "n": 3, "m": 0},
         ref=_pow2, grad=False, id="unsigned-nozero"),
    Case("Pow2Quantize", [Normal(X, 0.05)], {"n": 4}, ref=_pow2, grad=False, id="prunes"),
    Case("Prune", [Normal(X, 2)], ref=_prune, grad=False),
    Case("Prune", [Normal(X, 2)], {"rate": 0.0}, ref=_prune, grad=False, id="rate0"),
    Case("Prune", [Normal(X, 2)], {"rate": 1.0}, ref=_prune, grad=False, id="rate1"),
    Case("QuantizeLinear", [Normal((2, 3, 4), 20), Uniform(Q, 0.5, 1.5),
                            Fixed(np.array([1.5, -2.5, 3.2]).reshape(Q))],
         ref=_quantize_linear, grad=False),
    Case("QuantizeLinear", [Normal((2, 3, 4), 20), Uniform(Q, 0.5, 1.5), Int(Q, 0, 50)],
         {"round_mode": "HALF_TO_EVEN", "narrow_range": True, "dtype": 2},
         ref=_quantize_linear, grad=False, id="even-uint8-narrow"),
    Case("DequantizeLinear", [Normal((2, 3, 4), 20), Uniform(Q, 0.5, 1.5), Int(Q, -5, 5)],
         ref=lambda x, s, z: (x - z) * s, grad_inputs=(0,)),
    Case("MinMaxQuantize", _minmax_inputs(), ref=_min_max, grad=False, atol=1e-4),
    Case("MinMaxQuantize", _minmax_inputs(), {"x_min_max": True}, ref=_min_max, grad=False,
         atol=1e-4, id="x-min-max"),
    Case("MinMaxQuantize", _minmax_inputs(), {"x_min_max": True, "ema": True, "decay": 0.9},
         ref=_min_max, grad=False, atol=1e-4, id="ema"),
    Case("MinMaxQuantize", _minmax_inputs(0.0, 0.001), ref=_min_max, grad=False, atol=1e-4,
         id="nudged-range"),
]
