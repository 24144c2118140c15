"""Shape inference and bad-input errors of the recurrent layers."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _shapes(name, shapes, **args):
    spec = SPECS[name]
    return infer(spec, [None if s is None else tuple(s) for s in shapes],
                 bind_args(spec, args))[1]


def test_bidirectional_two_layer_lstm_shapes():
    shapes = [(5, 3, 4), (2, 2, 3, 6), (2, 2, 3, 6), (2, 4, 6, 10), (1, 2, 4, 6, 18),
              (2, 2, 4, 6)]
    assert _shapes("LSTM", shapes, num_layers=2, bidirectional=True) == (
        (5, 3, 12), (2, 2, 3, 6), (2, 2, 3, 6))


@pytest.mark.parametrize("shapes, args, message", [
    ([(5, 3), (1, 1, 3, 2), (1, 2, 6), None, None], {}, "'x' has shape"),
    ([(5, 3, 4), (1, 2, 3, 2), (1, 2, 6), None, None], {}, "'h' has shape"),
    ([(5, 3, 4), (1, 1, 3, 2), (1, 2, 5), None, None], {}, "'weight_l0' has shape"),
    ([(5, 3, 4), (2, 1, 3, 2), (1, 2, 6), None, None], {"num_layers": 2}, "'weight'"),
    ([(5, 3, 4), (1, 1, 3, 2), (1, 2, 6), (1, 1, 2, 4), None], {}, "num_layers == 1"),
    ([(5, 3, 4), (1, 1, 3, 2), (1, 2, 6), None, (1, 2, 2)], {}, "'bias' has shape"),
])
def test_rnn_rejects_inconsistent_shapes(shapes, args, message):
    with pytest.raises(ValueError, match=message):
        _shapes("RNN", shapes, **args)


def test_rnn_rejects_unknown_nonlinearity():
    with pytest.raises(ValueError, match="nonlinearity"):
        _shapes("RNN", [(5, 3, 4), (1, 1, 3, 2), (1, 2, 6), None, None], nonlinearity="gelu")


def test_gru_bias_has_four_gate_blocks():
    shapes = [(5, 3, 4), (1, 1, 3, 2), (1, 3, 2, 6), None, (1, 1, 3, 2)]
    with pytest.raises(ValueError, match=r"expected \(1, 1, 4, 2\)"):
        _shapes("GRU", shapes)


def test_backward_in_inference_mode_raises_runtime_error():
    rng = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rng.randn(3, 2, 4), need_grad=True)
    h = nn.Variable.from_numpy_array(rng.randn(1, 1, 2, 5), need_grad=True)
    w0 = nn.Variable.from_numpy_array(rng.randn(1, 5, 9), need_grad=True)
    y, _ = F.rnn(x, h, w0, training=False)
    y.forward()
    with pytest.raises(RuntimeError, match="training=False"):
        y.backward()
