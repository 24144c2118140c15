"""One small network per exported function type: ``CASES[type] = (input shapes, build)``,
``build(*inputs)`` returning the output (parameters made by PF with a fixed seed)."""
import numpy as np

import nnabla.functions as F
import nnabla.parametric_functions as PF


def _bn(x):
    y = PF.batch_normalization(x, batch_stat=False, name="bn")
    return y


def _unary(fn, low=None, high=None):
    return ([(2, 3, 4)], fn, (low, high))


CASES = {
    "ReLU": _unary(F.relu), "Sigmoid": _unary(F.sigmoid), "Tanh": _unary(F.tanh),
    "Abs": _unary(F.abs), "Exp": _unary(F.exp), "Log": _unary(F.log, 0.1, 3.0),
    "Sin": _unary(F.sin), "Cos": _unary(F.cos), "Tan": _unary(F.tan, -1.0, 1.0),
    "Sinh": _unary(F.sinh), "Cosh": _unary(F.cosh), "ASin": _unary(F.asin, -0.9, 0.9),
    "ACos": _unary(F.acos, -0.9, 0.9), "ATan": _unary(F.atan),
    "ASinh": _unary(F.asinh), "ACosh": _unary(F.acosh, 1.1, 3.0),
    "ATanh": _unary(F.atanh, -0.9, 0.9), "Erf": _unary(F.erf), "Ceil": _unary(F.ceil),
    "Floor": _unary(F.floor), "Identity": _unary(F.identity), "SoftSign": _unary(F.softsign),
    "Dropout": _unary(lambda x: F.dropout(x, 0.0)),     # p=0: deterministic in the NNP
    "LeakyReLU": _unary(lambda x: F.leaky_relu(x, 0.2)), "ELU": _unary(lambda x: F.elu(x, 0.7)),
    "SELU": _unary(F.selu), "HardSigmoid": _unary(F.hard_sigmoid),
    "HardTanh": _unary(F.hard_tanh), "ReLU6": _unary(lambda x: F.relu6(x * 4.0)),
    "SoftPlus": _unary(lambda x: F.softplus(x, 2.0)), "Swish": _unary(F.swish),
    "Mish": _unary(F.mish), "LogSigmoid": _unary(F.log_sigmoid),
    "TanhShrink": _unary(F.tanh_shrink), "GELU": _unary(F.gelu),
    "Sign": _unary(lambda x: F.sign(F.floor(x * 2.0), 0.5)),
    "Softmax": _unary(lambda x: F.softmax(x, axis=1)),
    "LogSoftmax": _unary(lambda x: F.log_softmax(x, axis=2)),
    "Add2": ([(2, 3), (2, 3)], F.add2, (None, None)),
    "BcAdd2": ([(2, 3), (1, 3)], F.bc_add2, (None, None)),
    "Sub2": ([(2, 3), (2, 3)], F.sub2, (None, None)),
    "Mul2": ([(2, 3), (1, 3)], F.mul2, (None, None)),
    "Div2": ([(2, 3), (2, 3)], F.div2, (0.5, 2.0)),
    "Pow2": ([(2, 3), (2, 3)], F.pow2, (0.5, 2.0)),
    "Maximum2": ([(2, 3), (2, 3)], F.maximum2, (None, None)),
    "Minimum2": ([(2, 3), (2, 3)], F.minimum2, (None, None)),
    "AddScalar": _unary(lambda x: F.add_scalar(x, 1.5)),
    "MulScalar": _unary(lambda x: F.mul_scalar(x, -2.0)),
    "PowScalar": _unary(lambda x: F.pow_scalar(x, 3.0)),
    "RSubScalar": _unary(lambda x: F.r_sub_scalar(x, 2.0)),
    "RDivScalar": _unary(lambda x: F.r_div_scalar(x, 2.0), 0.5, 2.0),
    "RPowScalar": _unary(lambda x: F.r_pow_scalar(x, 2.0)),
    "MaximumScalar": _unary(lambda x: F.maximum_scalar(x, 0.1)),
    "MinimumScalar": _unary(lambda x: F.minimum_scalar(x, 0.1)),
    "PReLU": ([(2, 3, 4, 4)], lambda x: PF.prelu(x, shared=False, name="p"), (None, None)),
    "SquaredError": ([(2, 3), (2, 3)], F.squared_error, (None, None)),
    "AbsoluteError": ([(2, 3), (2, 3)], F.absolute_error, (None, None)),
    "Affine": ([(2, 3, 4)], lambda x: PF.affine(x, (2, 5), name="fc"), (None, None)),
    "Convolution": ([(2, 3, 7, 7)],
                    lambda x: PF.convolution(x, 4, (3, 3), pad=(1, 2), stride=(2, 1),
                                             dilation=(1, 2), name="c"), (None, None)),
    "DepthwiseConvolution": ([(2, 3, 6, 6)],
                             lambda x: PF.depthwise_convolution(x, (3, 3), pad=(1, 1),
                                                                name="dw"), (None, None)),
    "Deconvolution": ([(2, 4, 5, 5)],
                      lambda x: PF.deconvolution(x, 2, (3, 3), pad=(1, 1), stride=(2, 2),
                                                 name="d"), (None, None)),
    "MaxPooling": ([(2, 3, 6, 6)], lambda x: F.max_pooling(x, (3, 3), (2, 2), pad=(1, 1)),
                   (None, None)),
    "AveragePooling": ([(2, 3, 6, 6)],
                       lambda x: F.average_pooling(x, (2, 2), (2, 2), pad=(1, 1),
                                                   including_pad=False), (None, None)),
    "SumPooling": ([(2, 3, 6, 6)], lambda x: F.sum_pooling(x, (2, 2)), (None, None)),
    "GlobalAveragePooling": ([(2, 3, 5, 5)], F.global_average_pooling, (None, None)),
    "BatchNormalization": ([(2, 3, 4, 4)], _bn, (None, None)),
    "Reshape": ([(2, 3, 4)], lambda x: F.reshape(x, (2, 12)), (None, None)),
    "Transpose": ([(2, 3, 4)], lambda x: F.transpose(x, (2, 0, 1)), (None, None)),
    "Concatenate": ([(2, 3), (2, 2)], lambda a, b: F.concatenate(a, b, axis=1), (None, None)),
    "Split": ([(2, 3, 4)], lambda x: F.split(x, axis=1), (None, None)),
    "Stack": ([(2, 3), (2, 3)], lambda a, b: F.stack(a, b, axis=1), (None, None)),
    "Slice": ([(4, 5, 6)], lambda x: F.slice(x, (1, 0, 1), (3, 5, 6), (1, 2, 2)),
              (None, None)),
    "Pad": ([(2, 3, 4)], lambda x: F.pad(x, (1, 2, 0, 1), mode="reflect"), (None, None)),
    "Broadcast": ([(2, 1, 4)], lambda x: F.broadcast(x, (2, 3, 4)), (None, None)),
    "Tile": ([(2, 3)], lambda x: F.tile(x, (2, 1, 3)), (None, None)),
    "Flip": ([(2, 3, 4)], lambda x: F.flip(x, (0, 2)), (None, None)),
    "BatchMatmul": ([(2, 4, 3), (2, 4, 5)],
                    lambda a, b: F.batch_matmul(a, b, transpose_a=True), (None, None)),
    "Sum": ([(2, 3, 4)], lambda x: F.sum(x, axis=(1, 2), keepdims=True), (None, None)),
    "Mean": ([(2, 3, 4)], lambda x: F.mean(x, axis=1), (None, None)),
    "Max": ([(2, 3, 4)], lambda x: F.max(x, axis=2), (None, None)),
    "Min": ([(2, 3, 4)], lambda x: F.min(x, axis=0, keepdims=True), (None, None)),
    "Prod": ([(2, 3, 4)], lambda x: F.prod(x, axis=1), (None, None)),
}


def _ints(high):
    """Integer-valued float inputs in [0, high) (labels, indices, exact comparisons)."""
    return lambda shapes, rng: [np.floor(rng.uniform(0, high, s)).astype(np.float32)
                                for s in shapes]


def _mixed(*makers):
    """Input i from ``makers[i](shape, rng)``."""
    return lambda shapes, rng: [m(s, rng) for m, s in zip(makers, shapes)]


def _randn(s, rng):
    return rng.randn(*s).astype(np.float32)


def _label(high):
    return lambda s, rng: np.floor(rng.uniform(0, high, s)).astype(np.float32)


def _prob(s, rng):
    return rng.uniform(0.05, 0.95, s).astype(np.float32)


def _with_special_values(shapes, rng):
    x = rng.randn(*shapes[0]).astype(np.float32)
    x.flat[0], x.flat[1], x.flat[2] = np.nan, np.inf, 0.0
    return [x]


def _ln(x):
    return PF.layer_normalization(x, name="ln")


def _in(x):
    return PF.instance_normalization(x, name="in")


def _gn(x):
    return PF.group_normalization(x, 2, name="gn")


def _fused(x, z):
    y = PF.fused_batch_normalization(x, z, batch_stat=False, name="fbn")
    return y


CASES.update({
    "CReLU": _unary(F.crelu), "CELU": _unary(lambda x: F.celu(x, 0.5)),
    "Round": ([(2, 8)], F.round, lambda shapes, rng: [
        (np.floor(rng.uniform(-6, 6, shapes[0])) / 2).astype(np.float32)]),
    "Sinc": ([(2, 5)], F.sinc, lambda shapes, rng: [
        np.where(np.arange(10).reshape(2, 5) < 2, 0.0, rng.randn(2, 5)).astype(np.float32)]),
    "CumSum": _unary(lambda x: F.cumsum(x, axis=1, exclusive=True, reverse=True)),
    "Greater": ([(3, 4), (3, 4)], F.greater, _ints(3)),
    "GreaterEqual": ([(3, 4), (3, 4)], F.greater_equal, _ints(3)),
    "Less": ([(3, 4), (3, 4)], F.less, _ints(3)),
    "LessEqual": ([(3, 4), (3, 4)], F.less_equal, _ints(3)),
    "Equal": ([(3, 4), (3, 4)], F.equal, _ints(3)),
    "NotEqual": ([(3, 4), (3, 4)], F.not_equal, _ints(3)),
    "GreaterScalar": ([(3, 4)], lambda x: F.greater_scalar(x, 1.0), _ints(3)),
    "GreaterEqualScalar": ([(3, 4)], lambda x: F.greater_equal_scalar(x, 1.0), _ints(3)),
    "LessScalar": ([(3, 4)], lambda x: F.less_scalar(x, 1.0), _ints(3)),
    "LessEqualScalar": ([(3, 4)], lambda x: F.less_equal_scalar(x, 1.0), _ints(3)),
    "EqualScalar": ([(3, 4)], lambda x: F.equal_scalar(x, 1.0), _ints(3)),
    "NotEqualScalar": ([(3, 4)], lambda x: F.not_equal_scalar(x, 1.0), _ints(3)),
    "LogicalAnd": ([(3, 4), (3, 4)], F.logical_and, _ints(2)),
    "LogicalOr": ([(3, 4), (3, 4)], F.logical_or, _ints(2)),
    "LogicalXor": ([(3, 4), (3, 4)], F.logical_xor, _ints(2)),
    "LogicalNot": ([(3, 4)], F.logical_not, _ints(2)),
    "Where": ([(3, 4), (3, 4), (3, 4)], F.where, _mixed(_label(2), _randn, _randn)),
    "IsNaN": ([(2, 4)], F.isnan, _with_special_values),
    "IsInf": ([(2, 4)], F.isinf, _with_special_values),
    "ResetNaN": ([(2, 4)], lambda x: F.reset_nan(x, 7.0), _with_special_values),
    "ResetInf": ([(2, 4)], lambda x: F.reset_inf(x, -7.0), _with_special_values),
    "HuberLoss": ([(3, 4), (3, 4)], lambda a, b: F.huber_loss(a, b, 0.8), (None, None)),
    "EpsilonInsensitiveLoss": ([(3, 4), (3, 4)],
                               lambda a, b: F.epsilon_insensitive_loss(a, b, 0.5),
                               (None, None)),
    "SigmoidCrossEntropy": ([(3, 4), (3, 4)], F.sigmoid_cross_entropy,
                            _mixed(_randn, _label(2))),
    "BinaryCrossEntropy": ([(3, 4), (3, 4)], F.binary_cross_entropy, _mixed(_prob, _prob)),
    "SoftmaxCrossEntropy": ([(3, 5), (3, 1)], lambda x, t: F.softmax_cross_entropy(x, t),
                            _mixed(_randn, _label(5))),
    "CategoricalCrossEntropy": ([(3, 5), (3, 1)],
                                lambda x, t: F.categorical_cross_entropy(F.softmax(x), t),
                                _mixed(_randn, _label(5))),
    "Norm": ([(2, 3, 4)], lambda x: F.norm(x, p=3.0, axis=(1, 2)), (None, None)),
    "FusedBatchNormalization": ([(2, 3, 4, 4), (2, 3, 4, 4)], _fused, (None, None)),
    "LayerNormalization": ([(2, 3, 4)], _ln, (None, None)),
    "InstanceNormalization": ([(2, 3, 4, 4)], _in, (None, None)),
    "GroupNormalization": ([(2, 4, 3, 3)], _gn, (None, None)),
    "Interpolate": ([(2, 3, 4, 5)],
                    lambda x: F.interpolate(x, output_size=(7, 9), mode="linear",
                                            align_corners=True), (None, None)),
    "Unpooling": ([(2, 3, 2, 3)], lambda x: F.unpooling(x, (2, 3)), (None, None)),
    "Embed": ([(2, 3), (6, 4)], F.embed, _mixed(_label(6), _randn)),
})


def inputs(shapes, low, high=None, seed=0):
    rng = np.random.RandomState(seed)
    if callable(low):
        return low(shapes, rng)
    if low is None:
        return [rng.randn(*s).astype(np.float32) for s in shapes]
    return [rng.uniform(low, high, s).astype(np.float32) for s in shapes]
