"""Parametric recurrent layers: rnn, lstm, gru, lstm_cell and the LSTMCell helper.

Default weights concatenate an input-to-hidden block and a hidden-to-hidden block, each
drawn uniformly with its own Glorot limit, input block first. ``rnn`` draws them on
every call (as nnabla does); ``lstm`` and ``gru`` only when the weight is created.
"""

import numpy as np

from .. import functions as F
from ..initializer import ConstantInitializer, UniformInitializer, calc_uniform_lim_glorot
from .api import get_or_create, parametric_function_api
from .layers import affine


def _glorot_blocks(rng, in_size, hidden, lead_shape, n_in):
    """Draws ``(lead_shape, hidden, n_in)`` then ``(lead_shape, hidden, hidden)`` blocks
    and joins them on the last axis; ``in_size`` sets the first block's Glorot limit."""
    lead = tuple(lead_shape) + (hidden,)
    ih = UniformInitializer(calc_uniform_lim_glorot(in_size, hidden), rng)(lead + (n_in,))
    hh = UniformInitializer(calc_uniform_lim_glorot(hidden, hidden), rng)(lead + (hidden,))
    return np.concatenate((ih, hh), axis=-1)


class _LazyBlocks:
    """Initializer drawing :func:`_glorot_blocks` only when the parameter is created."""

    def __init__(self, rng, in_size, hidden, lead_shape, n_in):
        self.args = (rng, in_size, hidden, lead_shape, n_in)

    def __call__(self, shape):
        return _glorot_blocks(*self.args)


def _sizes(x, h, bidirectional):
    """Returns (input_size, hidden_size, num_layers, num_directions) from the inputs."""
    return x.shape[2], h.shape[3], h.shape[0], 2 if bidirectional else 1


def _recurrent_parameters(gates, sizes, inits, rng, with_bias, fix_parameters, eager):
    """Creates ``weight_l0``, ``weight`` (if several layers) and ``bias`` (if any)."""
    input_size, hidden, layers, dirs = sizes
    w0_init, w_init, b_init = inits
    gate = (gates,) if gates else ()
    if w0_init is None:
        w0_args = (rng, input_size, hidden, (dirs,) + gate, input_size)
        w0_init = _glorot_blocks(*w0_args) if eager else _LazyBlocks(*w0_args)
    if w_init is None:
        w_args = (rng, dirs * hidden, hidden, (layers - 1, dirs) + gate, dirs * hidden)
        w_init = _glorot_blocks(*w_args) if eager else _LazyBlocks(*w_args)
    w0 = get_or_create("weight_l0", (dirs,) + gate + (hidden, input_size + hidden), w0_init,
                       fix_parameters)
    w = None
    if layers > 1:
        w = get_or_create("weight", (layers - 1, dirs) + gate + (hidden, (dirs + 1) * hidden),
                          w_init, fix_parameters)
    b = None
    if with_bias:
        bias_gates = (4,) if gates else ()  # GRU keeps 4 bias gates, as nnabla does
        b = get_or_create("bias", (layers, dirs) + bias_gates + (hidden,),
                          b_init if b_init is not None else ConstantInitializer(),
                          fix_parameters)
    return w0, w, b


@parametric_function_api("rnn", [
    ("weight_l0", "Weights of layer 0", "(D, H, I + H)", True),
    ("weight", "Weights of layers 1 and above", "(L-1, D, H, D*H + H)", True),
    ("bias", "Biases", "(L, D, H)", True)])
def rnn(x, h, w0_init=None, w_init=None, b_init=None, num_layers=1, nonlinearity="tanh",
        dropout=0.0, bidirectional=False, training=True, rng=None, with_bias=True,
        fix_parameters=False):
    """Elman RNN over a sequence ``x`` of shape ``(T, B, I)`` from state ``h`` ``(L, D, B, H)``.

    The number of layers is taken from ``h.shape[0]``.

    Returns:
        tuple of nnabla.Variable: Outputs ``(T, B, D*H)`` and final state ``(L, D, B, H)``.
    """
    sizes = _sizes(x, h, bidirectional)
    w0, w, b = _recurrent_parameters(0, sizes, (w0_init, w_init, b_init), rng, with_bias,
                                     fix_parameters, eager=True)
    return F.rnn(x, h, weight_l0=w0, weight=w, bias=b, num_layers=sizes[2],
                 nonlinearity=nonlinearity, dropout=dropout, bidirectional=bidirectional,
                 training=training)


@parametric_function_api("lstm", [
    ("weight_l0", "Weights of layer 0", "(D, 4, H, I + H)", True),
    ("weight", "Weights of layers 1 and above", "(L-1, D, 4, H, D*H + H)", True),
    ("bias", "Biases", "(L, D, 4, H)", True)])
def lstm(x, h, c, w0_init=None, w_init=None, b_init=None, num_layers=1, dropout=0.0,
         bidirectional=False, training=True, rng=None, with_bias=True, fix_parameters=False):
    """LSTM over ``x`` ``(T, B, I)`` from states ``h``, ``c`` ``(L, D, B, H)``.

    Returns:
        tuple of nnabla.Variable: Outputs, final hidden state, final cell state.
    """
    if isinstance(w0_init, int):
        raise ValueError(  # noqa: TRY004 (nnabla raises ValueError here)
            "PF.lstm: argument 'w0_init' is an int; the cell-level function "
            "with a state_size argument is PF.lstm_cell")
    sizes = _sizes(x, h, bidirectional)
    w0, w, b = _recurrent_parameters(4, sizes, (w0_init, w_init, b_init), rng, with_bias,
                                     fix_parameters, eager=False)
    return F.lstm(x, h, c, weight_l0=w0, weight=w, bias=b, num_layers=sizes[2],
                  dropout=dropout, bidirectional=bidirectional, training=training)


@parametric_function_api("gru", [
    ("weight_l0", "Weights of layer 0", "(D, 3, H, I + H)", True),
    ("weight", "Weights of layers 1 and above", "(L-1, D, 3, H, D*H + H)", True),
    ("bias", "Biases", "(L, D, 4, H)", True)])
def gru(x, h, w0_init=None, w_init=None, b_init=None, num_layers=1, dropout=0.0,
        bidirectional=False, training=True, rng=None, with_bias=True, fix_parameters=False):
    """GRU over ``x`` ``(T, B, I)`` from state ``h`` ``(L, D, B, H)`` (bias has 4 gates).

    Returns:
        tuple of nnabla.Variable: Outputs and final hidden state.
    """
    sizes = _sizes(x, h, bidirectional)
    w0, w, b = _recurrent_parameters(3, sizes, (w0_init, w_init, b_init), rng, with_bias,
                                     fix_parameters, eager=False)
    return F.gru(x, h, weight_l0=w0, weight=w, bias=b, num_layers=sizes[2], dropout=dropout,
                 bidirectional=bidirectional, training=training)


@parametric_function_api("lstm", [
    ("affine/W", "Stacked weights of the LSTM block", "(inmaps, 4, state_size)", True),
    ("affine/b", "Stacked biases of the LSTM block", "(4, state_size)", True)])
def lstm_cell(x, h, c, state_size, w_init=None, b_init=None, fix_parameters=False):
    """One LSTM step: gates from ``affine([x, h])`` in the order input, output, forget, cell.

    Returns:
        tuple of nnabla.Variable: New hidden state and new cell state, ``(B, state_size)``.
    """
    xh = F.concatenate(x, h, axis=1)
    iofc = affine(xh, (4, state_size), w_init=w_init, b_init=b_init,
                  fix_parameters=fix_parameters)
    i_t, o_t, f_t, gate = F.split(iofc, axis=1)
    c_t = F.sigmoid(f_t) * c + F.sigmoid(i_t) * F.tanh(gate)
    h_t = F.sigmoid(o_t) * F.tanh(c_t)
    return h_t, c_t


class LSTMCell:
    """Stateful wrapper around :func:`lstm_cell` holding ``h`` and ``c``.

    Args:
        batch_size (int): Batch size of the states.
        state_size (int): Size of the states.
        h, c (nnabla.Variable, optional): Initial states; zeros by default.
        name (str, optional): Parameter scope passed to :func:`lstm_cell`.
    """

    def __init__(self, batch_size, state_size, h=None, c=None, name=None):
        self.batch_size = batch_size
        self.state_size = state_size
        self.name = name
        self.h = h if h is not None else self._zero_state()
        self.c = c if c is not None else self._zero_state()

    def _zero_state(self):
        import nnabla

        state = nnabla.Variable((self.batch_size, self.state_size))
        state.data.zero()
        return state

    def reset_state(self):
        """Sets both states to zero."""
        self.h.data.zero()
        self.c.data.zero()

    def __call__(self, x, w_init=None, b_init=None, fix_parameters=False):
        """Advances one step and returns the new hidden state."""
        self.h, self.c = lstm_cell(x, self.h, self.c, self.state_size, w_init, b_init,
                                   fix_parameters=fix_parameters, name=self.name)
        return self.h
