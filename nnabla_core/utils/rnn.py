"""``nnabla.utils.rnn``: recurrent networks unrolled into graphs of basic functions.

``_create_fixed_length_rnn`` / ``_gru`` / ``_lstm`` build, for a fixed sequence
length, the same computation as ``F.rnn`` / ``F.gru`` / ``F.lstm`` (inference,
no dropout) out of ``F.affine``, ``F.concatenate`` and the activations, with
nnabla's parameter layouts. They serve as references for the fused functions
and differentiate like any graph.

Shapes: ``T`` time steps, ``B`` batch, ``I`` input size, ``H`` hidden size,
``L`` layers, ``D`` directions (1 or 2), ``G`` gates (RNN 1, GRU 3, LSTM 4):

- ``xs0`` (T, B, I); ``h0`` and ``c0`` (L, D, B, H);
- ``w0`` (D, [G,] H, I + H) for layer 0, ``w`` (L - 1, D, [G,] H, D * H + H) for the others;
- ``b`` (L, D, H) for RNN, (L, D, 4, H) for GRU (``r``, ``z``, and ``n``'s input and
  hidden biases) and LSTM (gates ``i``, ``f``, ``g``, ``o``).

The sequence-packing helpers of nnabla's module (``pad_sequence``,
``pack_padded_sequence``, ...) are not provided here; use ``F.pad_packed_sequence``
and ``F.pack_padded_sequence``.
"""
from __future__ import annotations

import nnabla.functions as F


def _gate(x, w, b):
    """x @ w.T + b for one gate: ``w`` is (H, K), ``b`` (H,) or None."""
    return F.affine(x, F.transpose(w, (1, 0)), b)


def _bias(b, k):
    return None if b is None else b[k]


def _rnn_cell(nonlinearity):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"nnabla.utils.rnn: nonlinearity is {nonlinearity!r}; "
                         "expected 'tanh' or 'relu'")
    activation = F.tanh if nonlinearity == "tanh" else F.relu

    def cell(x, states, w, b):
        """h' = act([x, h] W^T + b)."""
        h = activation(_gate(F.concatenate(x, states[0], axis=1), w, b))
        return h, (h,)
    return cell


def _gru_cell(x, states, w, b):
    """r, z = sigmoid([x, h] W_{r,z}^T + b); n = tanh(x W_nx^T + b_nx + r (h W_nh^T + b_nh));
    h' = (1 - z) n + z h."""
    (h,) = states
    hidden = h.shape[1]
    xh = F.concatenate(x, h, axis=1)
    r = F.sigmoid(_gate(xh, w[0], _bias(b, 0)))
    z = F.sigmoid(_gate(xh, w[1], _bias(b, 1)))
    wn = w[2]
    n = F.tanh(_gate(x, wn[:, :wn.shape[1] - hidden], _bias(b, 2))
               + r * _gate(h, wn[:, wn.shape[1] - hidden:], _bias(b, 3)))
    h = (1 - z) * n + z * h
    return h, (h,)


def _lstm_cell(x, states, w, b):
    """i, f, g, o = [x, h] W_k^T + b_k; c' = sigmoid(f) c + sigmoid(i) tanh(g);
    h' = sigmoid(o) tanh(c')."""
    h, c = states
    xh = F.concatenate(x, h, axis=1)
    i, f, g, o = (_gate(xh, w[k], _bias(b, k)) for k in range(4))
    c = F.sigmoid(f) * c + F.sigmoid(i) * F.tanh(g)
    h = F.sigmoid(o) * F.tanh(c)
    return h, (h, c)


def _unroll(cell, xs0, states0, w0, w, b, num_layers, num_directions, with_bias):
    """Run ``cell`` over time, directions and layers; return ys (T, B, D*H) and the
    final states, each (L, D, B, H)."""
    steps, batch = xs0.shape[0], xs0.shape[1]
    hidden = states0[0].shape[3]
    xs = [xs0[t] for t in range(steps)]
    finals = [[] for _ in states0]
    for layer in range(num_layers):
        wl = w0 if layer == 0 else w[layer - 1]
        outputs = None
        for d in range(num_directions):
            states = tuple(s[layer, d] for s in states0)
            bias = b[layer, d] if with_bias else None
            hs = [None] * steps
            for t in (range(steps) if d == 0 else reversed(range(steps))):
                hs[t], states = cell(xs[t], states, wl[d], bias)
            for final, state in zip(finals, states):
                final.append(state)
            outputs = hs if outputs is None else [
                F.concatenate(a, c, axis=1) for a, c in zip(outputs, hs)]
        xs = outputs
    shape = (num_layers, num_directions, batch, hidden)
    return (F.stack(*xs, axis=0),) + tuple(
        F.reshape(F.stack(*final, axis=0), shape) for final in finals)


def _create_fixed_length_rnn(xs0, h0, w0, w, b, num_layers, nonlinearity, num_directions,
                             with_bias):
    """Elman RNN over a fixed-length sequence. Returns ``(ys, hn)``."""
    return _unroll(_rnn_cell(nonlinearity), xs0, (h0,), w0, w, b, num_layers, num_directions,
                   with_bias)


def _create_fixed_length_gru(xs0, h0, w0, w, b, num_layers, num_directions, with_bias):
    """GRU over a fixed-length sequence. Returns ``(ys, hn)``."""
    return _unroll(_gru_cell, xs0, (h0,), w0, w, b, num_layers, num_directions, with_bias)


def _create_fixed_length_lstm(xs0, h0, c0, w0, w, b, num_layers, num_directions, with_bias):
    """LSTM over a fixed-length sequence. Returns ``(ys, hn, cn)``."""
    return _unroll(_lstm_cell, xs0, (h0, c0), w0, w, b, num_layers, num_directions, with_bias)
