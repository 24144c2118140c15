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


def inputs(shapes, low, high, seed=0):
    rng = np.random.RandomState(seed)
    if low is None:
        return [rng.randn(*s).astype(np.float32) for s in shapes]
    return [rng.uniform(low, high, s).astype(np.float32) for s in shapes]
