"""Per-function micro benchmarks: forward + backward of one function in a static graph, ms.

Shapes are those of the deep CNN of the static-vs-dynamic tutorial (batch 64,
128 channels, 8x8 maps); the strided convolution takes ResNet-18's first downsampling
(batch 32, 64 channels, 32x32, to 128); softmax and batch_matmul take the Transformer
benchmark's attention (64 matrices of 128x128 scores, 32 features per head); sequences
are (length 16, batch 64, 128 features) and sorts run over rows of 1024.
Cases (one per process, see ``run.py``): ``fn_convolution`` (3x3), ``fn_convolution_1x1``,
``fn_convolution_strided``, ``fn_convolution_depthwise``, ``fn_convolution_grouped``
(4 groups), ``fn_convolution_dilated`` (dilation 2), ``fn_convolution_channel_last``,
``fn_max_pooling``, ``fn_average_pooling``, ``fn_batch_normalization``, ``fn_affine``,
``fn_tanh``, ``fn_gelu``, ``fn_softmax``, ``fn_batch_matmul``, ``fn_deconvolution``,
``fn_layer_normalization``, ``fn_rnn``, ``fn_lstm``, ``fn_gru``, ``fn_multi_head_attention``,
``fn_interpolate``, ``fn_sort``, ``fn_top_k_data``. ``torch_functions.py`` holds the
PyTorch twin of each.
"""
import _harness
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np

MAPS = (64, 128, 8, 8)
SEQUENCE = (16, 64, 128)     # (length, batch, features)
ROWS = (256, 1024)
MAPS_LAST = (64, 8, 8, 128)  # MAPS, channels last
STRIDED = (32, 64, 32, 32)
SCORES = (64, 128, 128)      # (batch * heads, time, time)
HEADS = (64, 128, 32)        # (batch * heads, time, features per head)


def _time_forward_backward(build, shape, quick):
    """Build ``y = build(x)`` for a random x of ``shape``; time forward + backward in ms."""
    nn.seed(0)
    x = nn.Variable.from_numpy_array(
        np.random.RandomState(0).randn(*shape).astype(np.float32), need_grad=True)
    y = build(x)

    def step():
        y.forward()
        y.backward()

    _harness.emit(_harness.seconds_per_call(step, 5 if quick else 30, warmup=2) * 1e3, "ms")


def _batch_matmul(x):
    """x @ w^T with a second operand of x's shape that also needs its gradient."""
    w = nn.Variable.from_numpy_array(
        np.random.RandomState(1).randn(*x.shape).astype(np.float32), need_grad=True)
    return F.batch_matmul(x, w, transpose_b=True)


def _recurrent(layer, with_cell=False):
    """``layer(x, h[, c])[0]`` with one layer of 128 hidden units and zero initial states."""
    def build(x):
        states = [nn.Variable.from_numpy_array(np.zeros((1, 1, x.shape[1], 128), np.float32))
                  for _ in range(2 if with_cell else 1)]
        return layer(x, *states)[0]
    return build


CASES = {
    "fn_convolution": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(1, 1)), MAPS, quick),
    "fn_convolution_1x1": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (1, 1)), MAPS, quick),
    "fn_convolution_strided": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(1, 1), stride=(2, 2)), STRIDED, quick),
    "fn_convolution_depthwise": lambda quick: _time_forward_backward(
        lambda x: PF.depthwise_convolution(x, (3, 3), pad=(1, 1)), MAPS, quick),
    "fn_convolution_grouped": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(1, 1), group=4), MAPS, quick),
    "fn_convolution_dilated": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(2, 2), dilation=(2, 2)), MAPS, quick),
    "fn_convolution_channel_last": lambda quick: _time_forward_backward(
        lambda x: PF.convolution(x, 128, (3, 3), pad=(1, 1), channel_last=True), MAPS_LAST,
        quick),
    "fn_gelu": lambda quick: _time_forward_backward(F.gelu, MAPS, quick),
    "fn_softmax": lambda quick: _time_forward_backward(
        lambda x: F.softmax(x, axis=2), SCORES, quick),
    "fn_batch_matmul": lambda quick: _time_forward_backward(_batch_matmul, HEADS, quick),
    "fn_max_pooling": lambda quick: _time_forward_backward(
        lambda x: F.max_pooling(x, (2, 2)), MAPS, quick),
    "fn_average_pooling": lambda quick: _time_forward_backward(
        lambda x: F.average_pooling(x, (2, 2)), MAPS, quick),
    "fn_batch_normalization": lambda quick: _time_forward_backward(
        lambda x: PF.batch_normalization(x), MAPS, quick),
    "fn_affine": lambda quick: _time_forward_backward(
        lambda x: PF.affine(x, 1024), (64, 512, 2, 2), quick),
    "fn_tanh": lambda quick: _time_forward_backward(F.tanh, MAPS, quick),
    "fn_deconvolution": lambda quick: _time_forward_backward(
        lambda x: PF.deconvolution(x, 128, (3, 3), pad=(1, 1)), MAPS, quick),
    "fn_layer_normalization": lambda quick: _time_forward_backward(
        lambda x: PF.layer_normalization(x), MAPS, quick),
    "fn_rnn": lambda quick: _time_forward_backward(_recurrent(PF.rnn), SEQUENCE, quick),
    "fn_lstm": lambda quick: _time_forward_backward(
        _recurrent(PF.lstm, with_cell=True), SEQUENCE, quick),
    "fn_gru": lambda quick: _time_forward_backward(_recurrent(PF.gru), SEQUENCE, quick),
    "fn_multi_head_attention": lambda quick: _time_forward_backward(
        lambda x: PF.multi_head_attention(x, x, x, num_heads=8)[0], SEQUENCE, quick),
    "fn_interpolate": lambda quick: _time_forward_backward(
        lambda x: F.interpolate(x, scale=(2, 2), mode="linear"), MAPS, quick),
    "fn_sort": lambda quick: _time_forward_backward(lambda x: F.sort(x), ROWS, quick),
    "fn_top_k_data": lambda quick: _time_forward_backward(
        lambda x: F.top_k_data(x, 16), ROWS, quick),
}

if __name__ == "__main__":
    _harness.run_case(CASES)
