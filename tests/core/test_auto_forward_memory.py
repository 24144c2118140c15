"""Auto-forward memory release (nnabla v1.32 release notes) measured through array bytes."""
import gc

import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla._array import memory_stats, reset_peak_memory

MB4 = 1000 * 1000 * 4


def _in_use():
    gc.collect()
    return memory_stats()["in_use"]


def test_rebinding_a_handle_releases_the_previous_output():
    x = nn.Variable((1000, 1000))
    x.d = np.ones((1000, 1000), np.float32)
    base = _in_use()
    with nn.auto_forward():
        y = F.identity(x)
        assert _in_use() - base == MB4
        y = F.identity(y)       # the first y's memory goes with its handle
        assert _in_use() - base == MB4
    np.testing.assert_array_equal(y.d[:2, :2], 1.0)


def test_locals_of_a_returning_scope_are_released():
    def local_scope(x):
        h = F.identity(x)
        y = F.identity(h)
        return y

    x = nn.Variable((1000, 1000))
    x.d = np.full((1000, 1000), 2.0, np.float32)
    base = _in_use()
    with nn.auto_forward():
        y = local_scope(x)
    assert _in_use() - base == MB4
    assert y.d[0, 0] == 2.0


def test_data_a_backward_needs_is_kept_and_gradients_stay_right():
    x = nn.Variable.from_numpy_array(np.full((1000, 1000), 0.5, np.float32), need_grad=True)
    base = _in_use()
    with nn.auto_forward():
        h = F.tanh(x)           # tanh's backward reads its output: h must survive
        y = F.mul_scalar(h, 3.0)
        del h
        assert _in_use() - base == 2 * MB4
    y.backward()
    np.testing.assert_allclose(x.g[0, 0], 3 * (1 - np.tanh(0.5) ** 2), rtol=1e-6)


def _cnn(x):
    with nn.parameter_scope("cnn"):
        h = x
        for i in range(4):
            with nn.parameter_scope(f"conv{i}"):
                h = F.tanh(PF.batch_normalization(PF.convolution(h, 16, (3, 3), pad=(1, 1))))
        h = F.average_pooling(h, (2, 2))
        with nn.parameter_scope("fc"):
            return PF.affine(h, 10)


def _peak(step):
    gc.collect()
    reset_peak_memory()
    base = memory_stats()["in_use"]
    step()
    gc.collect()
    return memory_stats()["peak"] - base


def test_dynamic_peak_memory_is_within_ten_percent_of_static_with_clear_buffer():
    nn.clear_parameters()
    rng = np.random.RandomState(0)
    img = rng.randn(32, 1, 8, 8).astype(np.float32)
    label = rng.randint(0, 10, (32, 1))
    x, t = nn.Variable(img.shape), nn.Variable(label.shape)
    x.d, t.d = img, label
    loss = F.mean(F.softmax_cross_entropy(_cnn(x), t))
    params = nn.get_parameters()
    for p in params.values():
        p.d                      # materialise parameters outside the measured steps
        p.g

    def static_step():
        loss.forward(clear_no_need_grad=True)
        loss.backward(clear_buffer=True)

    def dynamic_step():
        with nn.auto_forward():
            dynamic_loss = F.mean(F.softmax_cross_entropy(_cnn(x), t))
        dynamic_loss.backward(clear_buffer=True)

    static_step()
    static_peak = _peak(static_step)
    dynamic_peak = _peak(dynamic_step)
    assert static_peak > 0
    assert dynamic_peak <= 1.10 * static_peak, (static_peak, dynamic_peak)
