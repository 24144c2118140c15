"""Backward functions of ``F.rnn``, ``F.gru`` and ``F.lstm``, by differentiating the
networks unrolled into basic functions (:mod:`nnabla.utils.rnn`, nnabla's layouts).

Dropout between layers in training draws random masks that the unrolled graph
cannot replay, so that configuration has no backward function here.
"""
from __future__ import annotations

from ._composite import composite_backward


def _layout(n_states):
    """Presence of (x, states..., weight_l0, weight, bias) from how many inputs are given."""
    def layout(n_given, num_layers=1, **args):
        deep = num_layers > 1
        with_bias = n_given > 2 + n_states + deep
        return [True] * (2 + n_states) + [deep, with_bias]
    return layout


def _check_no_dropout(name, num_layers, dropout, training):
    if training and (dropout or 0) > 0 and num_layers > 1:
        raise NotImplementedError(f"F.{name}: no backward function for dropout={dropout} "
                                  "between layers in training (its masks cannot be replayed)")


def _directions(bidirectional):
    return 2 if bidirectional else 1


def _rnn(inputs, output_shapes, num_layers=1, nonlinearity="tanh", dropout=0.0,
         bidirectional=False, training=True):
    from ..utils.rnn import _create_fixed_length_rnn
    _check_no_dropout("rnn", num_layers, dropout, training)
    x, h, w0, w, b = inputs
    return list(_create_fixed_length_rnn(x, h, w0, w, b, num_layers, nonlinearity,
                                         _directions(bidirectional), b is not None))


def _gru(inputs, output_shapes, num_layers=1, dropout=0.0, bidirectional=False, training=True):
    from ..utils.rnn import _create_fixed_length_gru
    _check_no_dropout("gru", num_layers, dropout, training)
    x, h, w0, w, b = inputs
    return list(_create_fixed_length_gru(x, h, w0, w, b, num_layers,
                                         _directions(bidirectional), b is not None))


def _lstm(inputs, output_shapes, num_layers=1, dropout=0.0, bidirectional=False,
          training=True):
    from ..utils.rnn import _create_fixed_length_lstm
    _check_no_dropout("lstm", num_layers, dropout, training)
    x, h, c, w0, w, b = inputs
    return list(_create_fixed_length_lstm(x, h, c, w0, w, b, num_layers,
                                          _directions(bidirectional), b is not None))


BACKWARDS = {
    "RNN": composite_backward(_rnn, _layout(1)),
    "GRU": composite_backward(_gru, _layout(1)),
    "LSTM": composite_backward(_lstm, _layout(2)),
}
