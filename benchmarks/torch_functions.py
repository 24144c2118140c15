"""PyTorch twins of ``bench_functions.py``: forward + backward of one operation at the same
shapes, with parameters that need gradients as nnabla's ``PF`` layers create them, and an
output gradient of ones (what nnabla's ``y.backward()`` seeds). Same case names, ms."""
import _harness
import _torch_harness
import numpy as np
import torch
import torch.nn.functional as TF
from bench_functions import HEADS, MAPS, ROWS, SCORES, SEQUENCE, STRIDED
from torch import nn


def _time_forward_backward(build, shape, quick, channels_last=False):
    """Build the module/closure ``f`` from ``build()``; time ``f(x).backward(ones)`` in ms."""
    _torch_harness.setup()
    x = torch.from_numpy(np.random.RandomState(0).randn(*shape).astype(np.float32))
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    x.requires_grad_(True)
    f = build()
    if channels_last:
        f = f.to(memory_format=torch.channels_last)

    def step():
        y = f(x)
        y.backward(torch.ones_like(y))

    _torch_harness.emit(_harness.seconds_per_call(step, 5 if quick else 30, warmup=2) * 1e3,
                        "ms")


def _conv(**kw):
    return lambda: nn.Conv2d(kw.pop("cin", 128), 128, **kw)


def _batch_matmul():
    w = torch.from_numpy(np.random.RandomState(1).randn(*HEADS).astype(np.float32))
    w.requires_grad_(True)
    return lambda x: torch.bmm(x, w.transpose(1, 2))


def _recurrent(kind):
    def build():
        layer = kind(SEQUENCE[2], 128)
        return lambda x: layer(x)[0]
    return build


def _attention():
    layer = nn.MultiheadAttention(SEQUENCE[2], 8)
    return lambda x: layer(x, x, x, need_weights=False)[0]


def _case(build, shape, channels_last=False):
    return lambda quick: _time_forward_backward(build, shape, quick, channels_last)


CASES = {
    "fn_convolution": _case(_conv(kernel_size=3, padding=1), MAPS),
    "fn_convolution_1x1": _case(_conv(kernel_size=1), MAPS),
    "fn_convolution_strided": _case(_conv(cin=64, kernel_size=3, padding=1, stride=2), STRIDED),
    "fn_convolution_depthwise": _case(
        lambda: nn.Conv2d(128, 128, 3, padding=1, groups=128), MAPS),
    "fn_convolution_grouped": _case(_conv(kernel_size=3, padding=1, groups=4), MAPS),
    "fn_convolution_dilated": _case(_conv(kernel_size=3, padding=2, dilation=2), MAPS),
    "fn_convolution_channel_last": _case(_conv(kernel_size=3, padding=1), MAPS,
                                         channels_last=True),
    "fn_max_pooling": _case(lambda: nn.MaxPool2d(2), MAPS),
    "fn_average_pooling": _case(lambda: nn.AvgPool2d(2), MAPS),
    "fn_batch_normalization": _case(lambda: nn.BatchNorm2d(128), MAPS),
    "fn_affine": _case(lambda: nn.Sequential(nn.Flatten(), nn.Linear(2048, 1024)),
                       (64, 512, 2, 2)),
    "fn_tanh": _case(lambda: torch.tanh, MAPS),
    "fn_gelu": _case(lambda: (lambda x: TF.gelu(x, approximate="tanh")), MAPS),
    "fn_softmax": _case(lambda: (lambda x: torch.softmax(x, dim=2)), SCORES),
    "fn_batch_matmul": _case(_batch_matmul, HEADS),
    "fn_deconvolution": _case(lambda: nn.ConvTranspose2d(128, 128, 3, padding=1), MAPS),
    "fn_layer_normalization": _case(lambda: nn.LayerNorm(MAPS[1:]), MAPS),
    "fn_rnn": _case(_recurrent(nn.RNN), SEQUENCE),
    "fn_lstm": _case(_recurrent(nn.LSTM), SEQUENCE),
    "fn_gru": _case(_recurrent(nn.GRU), SEQUENCE),
    "fn_multi_head_attention": _case(_attention, SEQUENCE),
    "fn_interpolate": _case(lambda: (lambda x: TF.interpolate(
        x, scale_factor=2, mode="bilinear", align_corners=True)), MAPS),
    "fn_sort": _case(lambda: (lambda x: torch.sort(x, dim=-1)[0]), ROWS),
    "fn_top_k_data": _case(lambda: (lambda x: torch.topk(x, 16, dim=-1)[0]), ROWS),
}

if __name__ == "__main__":
    _harness.run_case(CASES)
