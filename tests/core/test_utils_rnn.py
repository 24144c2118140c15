"""nnabla.utils.rnn: unrolled RNN/GRU/LSTM graphs agree with the fused functions."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.utils.rnn import (_create_fixed_length_gru, _create_fixed_length_lstm,
                              _create_fixed_length_rnn)

T, B, I, H = 3, 2, 4, 5  # noqa: E741 - time, batch, input, hidden sizes


def _v(rng, *shape):
    return nn.Variable.from_numpy_array(rng.randn(*shape).astype(np.float32))


@pytest.mark.parametrize("layers, dirs", [(1, 1), (2, 2)])
def test_unrolled_rnn_matches_f_rnn(layers, dirs):
    rng = np.random.RandomState(0)
    x, h = _v(rng, T, B, I), _v(rng, layers, dirs, B, H)
    w0, b = _v(rng, dirs, H, I + H), _v(rng, layers, dirs, H)
    w = _v(rng, layers - 1, dirs, H, dirs * H + H) if layers > 1 else None
    ys, hn = _create_fixed_length_rnn(x, h, w0, w, b, layers, "tanh", dirs, True)
    ref_y, ref_h = F.rnn(x, h, w0, w, b, num_layers=layers, bidirectional=dirs == 2,
                         training=False)
    F.sink(ys, hn, ref_y, ref_h).forward()
    np.testing.assert_allclose(ys.d, ref_y.d, atol=1e-5)
    np.testing.assert_allclose(hn.d, ref_h.d, atol=1e-5)


@pytest.mark.parametrize("layers, dirs", [(1, 2), (2, 1)])
def test_unrolled_gru_matches_f_gru(layers, dirs):
    rng = np.random.RandomState(1)
    x, h = _v(rng, T, B, I), _v(rng, layers, dirs, B, H)
    w0, b = _v(rng, dirs, 3, H, I + H), _v(rng, layers, dirs, 4, H)
    w = _v(rng, layers - 1, dirs, 3, H, dirs * H + H) if layers > 1 else None
    ys, hn = _create_fixed_length_gru(x, h, w0, w, b, layers, dirs, True)
    ref_y, ref_h = F.gru(x, h, w0, w, b, num_layers=layers, bidirectional=dirs == 2,
                         training=False)
    F.sink(ys, hn, ref_y, ref_h).forward()
    np.testing.assert_allclose(ys.d, ref_y.d, atol=1e-5)
    np.testing.assert_allclose(hn.d, ref_h.d, atol=1e-5)


def test_unrolled_lstm_matches_f_lstm_and_differentiates():
    rng = np.random.RandomState(2)
    x, h, c = _v(rng, T, B, I), _v(rng, 2, 2, B, H), _v(rng, 2, 2, B, H)
    w0, w, b = _v(rng, 2, 4, H, I + H), _v(rng, 1, 2, 4, H, 2 * H + H), _v(rng, 2, 2, 4, H)
    x.need_grad = True
    ys, hn, cn = _create_fixed_length_lstm(x, h, c, w0, w, b, 2, 2, True)
    ref = F.lstm(x, h, c, w0, w, b, num_layers=2, bidirectional=True, training=False)
    F.sink(ys, hn, cn, *ref).forward()
    for got, want in zip((ys, hn, cn), ref):
        np.testing.assert_allclose(got.d, want.d, atol=1e-5)
    x.grad.zero()
    F.sink(ys, hn, cn, one_input_grad=True).backward()
    assert np.abs(x.g).sum() > 0
