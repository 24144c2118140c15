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

The sequence-packing helpers (:class:`PackedSequence`, :func:`pad_sequence`,
:func:`pack_padded_sequence`, :func:`pack_sequence`, :func:`pad_packed_sequence`) are
nnabla's. Packed shapes depend on the lengths' values, so, as in nnabla, use them in
dynamic mode (``nn.auto_forward()``); the lengths are read on the host.
"""
from __future__ import annotations

import numpy as np

import nnabla as nn
import nnabla.functions as F


class PackedSequence:
    """A batch of variable-length sequences packed time step by time step.

    Attributes:
        data (~nnabla.Variable): the packed values, ``(sum of lengths, *)``.
        batch_sizes (~nnabla.Variable): sequences still running at each time step.
        sorted_indices (~nnabla.Variable or None): the batch order used for packing
            (longest first), None when the input was already sorted.
        unsorted_indices (~nnabla.Variable or None): the permutation back to the input order.
    """

    def __init__(self):
        self.data = None
        self.batch_sizes = None
        self.sorted_indices = None
        self.unsorted_indices = None

    def __repr__(self):
        return (f"PackedSequence(data={self.data}, batch_sizes={self.batch_sizes}, "
                f"sorted_indices={self.sorted_indices}, "
                f"unsorted_indices={self.unsorted_indices})")

    __str__ = __repr__


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """Stack variables of shapes ``(T_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` when
    ``batch_first``), ``T = max T_i``, filling the ends with ``padding_value``;
    differentiable with respect to every sequence.

    Example:
        >>> import numpy as np, nnabla as nn
        >>> import nnabla.utils.rnn as rnn_utils
        >>> seqs = [nn.Variable.from_numpy_array(np.array(v, np.float32))
        ...         for v in ([1, 1, 1], [2, 2], [3])]
        >>> with nn.auto_forward():
        ...     padded = rnn_utils.pad_sequence(seqs, batch_first=True)
        >>> padded.d.tolist()
        [[1.0, 1.0, 1.0], [2.0, 2.0, 0.0], [3.0, 0.0, 0.0]]
    """
    sequences = list(sequences)
    if not sequences:
        raise ValueError("nnabla.utils.rnn.pad_sequence: argument 'sequences' is empty; "
                         "expected at least one Variable")
    rest = tuple(sequences[0].shape[1:])
    for i, s in enumerate(sequences):
        if tuple(s.shape[1:]) != rest:
            raise ValueError(f"nnabla.utils.rnn.pad_sequence: sequence {i} has shape "
                             f"{tuple(s.shape)}; expected (T_{i}, *{rest}) like sequence 0")
    T = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = T - s.shape[0]
        if missing:
            s = F.pad(s, (0, missing) + (0, 0) * len(rest), constant_value=padding_value)
        padded.append(s)
    return F.stack(*padded, axis=0 if batch_first else 1)


def _index_variable(values):
    return nn.Variable.from_numpy_array(np.asarray(values, dtype=np.int64))


def pack_padded_sequence(padded_sequence, lengths, batch_first=False, enforce_sorted=True):
    """Pack ``padded_sequence`` (``(T, B, *)``, or ``(B, T, *)`` when ``batch_first``)
    whose sequence ``b`` has ``lengths[b]`` valid steps; returns a :class:`PackedSequence`.

    With ``enforce_sorted`` the lengths must not increase along the batch; otherwise the
    batch is reordered longest first (ties keep their order) and the permutation kept.
    """
    if not enforce_sorted:
        order = np.argsort(-np.asarray(lengths.d).reshape(-1), kind="stable")
        sorted_indices = _index_variable(order)
        unsorted_indices = _index_variable(np.argsort(order, kind="stable"))
        lengths = F.gather(lengths, sorted_indices, axis=0)
        padded_sequence = F.gather(padded_sequence, sorted_indices,
                                   axis=0 if batch_first else 1)
    else:
        sorted_indices = unsorted_indices = None
    data, batch_sizes = F.pack_padded_sequence(padded_sequence, lengths, batch_first)
    packed = PackedSequence()
    packed.data, packed.batch_sizes = data, batch_sizes
    packed.sorted_indices, packed.unsorted_indices = sorted_indices, unsorted_indices
    return packed


def pack_sequence(sequences, batch_first=False, enforce_sorted=True):
    """Pack variables of shapes ``(T_i, *)``: :func:`pad_sequence` (time-major) then
    :func:`pack_padded_sequence`. ``batch_first`` is accepted and, as in nnabla, not used."""
    sequences = list(sequences)
    lengths = _index_variable([s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Unpack a :class:`PackedSequence` into ``(padded, lengths)``, the padded variable of
    shape ``(T, B, *)`` (``(B, T, *)`` when ``batch_first``), in the original batch order.

    ``total_length`` pads the time axis up to that length; it must be at least the longest
    sequence (ValueError otherwise).
    """
    steps = sequence.batch_sizes.shape[0]
    if total_length is not None and total_length < steps:
        raise ValueError(f"nnabla.utils.rnn.pad_packed_sequence: argument 'total_length' is "
                         f"{total_length}; expected at least the longest sequence ({steps})")
    padded, lengths = F.pad_packed_sequence(sequence.data, sequence.batch_sizes, batch_first,
                                            padding_value, total_length)
    if sequence.unsorted_indices is not None:
        padded = F.gather(padded, sequence.unsorted_indices, axis=0 if batch_first else 1)
        lengths = F.gather(lengths, sequence.unsorted_indices, axis=0)
    return padded, lengths


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
