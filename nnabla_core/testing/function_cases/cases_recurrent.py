"""Cases of the recurrent layers with step-by-step numpy references.

The references unroll each layer and direction over time with one cell call per
step on the concatenation [x_t, h_{t-1}], as the layers are defined, not with the
kernels' batched input projection.
"""
import numpy as np
from .case import Case, Normal


def _sig(a):
    return 1 / (1 + np.exp(-a))


def _rnn_cell(nonlinearity):
    def cell(x, state, w, b):
        a = np.concatenate([x, state[0]], axis=1) @ w.T + (0 if b is None else b)
        return (np.tanh(a) if nonlinearity == "tanh" else np.maximum(a, 0),)
    return cell


def _lstm_cell(x, state, w, b):
    h, c = state
    xh = np.concatenate([x, h], axis=1)
    i, f, g, o = (xh @ w[k].T + (0 if b is None else b[k]) for k in range(4))
    c = _sig(f) * c + _sig(i) * np.tanh(g)
    return _sig(o) * np.tanh(c), c


def _gru_cell(x, state, w, b):
    h = state[0]
    hidden = h.shape[1]
    b = np.zeros((4, hidden)) if b is None else b
    xh = np.concatenate([x, h], axis=1)
    r = _sig(xh @ w[0].T + b[0])
    z = _sig(xh @ w[1].T + b[1])
    wn_x, wn_h = w[2][:, :-hidden], w[2][:, -hidden:]
    n = np.tanh(x @ wn_x.T + b[2] + r * (h @ wn_h.T + b[3]))
    return ((1 - z) * n + z * h,)


def _unroll(cell, x, states, w0, w, b, num_layers, bidirectional):
    dirs = 2 if bidirectional else 1
    finals = [np.zeros_like(s) for s in states]
    seq = list(x)
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            weight = w0[d] if layer == 0 else w[layer - 1, d]
            bias = None if b is None else b[layer, d]
            state = tuple(s[layer, d] for s in states)
            ys = [None] * len(seq)
            order = range(len(seq)) if d == 0 else reversed(range(len(seq)))
            for t in order:
                state = cell(seq[t], state, weight, bias)
                ys[t] = state[0]
            outs.append(ys)
            for f, s in zip(finals, state):
                f[layer, d] = s
        seq = [np.concatenate([o[t] for o in outs], axis=1) for t in range(len(seq))]
    return (np.stack(seq),) + tuple(finals)


def ref_rnn(x, h, w0, w=None, b=None, num_layers=1, nonlinearity="tanh", dropout=None,
            bidirectional=False, training=True):
    return _unroll(_rnn_cell(nonlinearity), x, [h], w0, w, b, num_layers, bidirectional)


def ref_lstm(x, h, c, w0, w=None, b=None, num_layers=1, dropout=None, bidirectional=False,
             training=True):
    return _unroll(_lstm_cell, x, [h, c], w0, w, b, num_layers, bidirectional)


def ref_gru(x, h, w0, w=None, b=None, num_layers=1, dropout=None, bidirectional=False,
            training=True):
    return _unroll(_gru_cell, x, [h], w0, w, b, num_layers, bidirectional)


def _inputs(gates, bias_gates, steps, batch, in_size, hidden, layers, bidirectional, bias,
            n_states=1):
    d = 2 if bidirectional else 1
    g = (gates,) if gates else ()
    gb = (bias_gates,) if bias_gates else ()
    scale = 0.5
    out = [Normal((steps, batch, in_size))]
    out += [Normal((layers, d, batch, hidden))] * n_states
    out += [Normal((d,) + g + (hidden, in_size + hidden), scale)]
    out += [Normal((layers - 1, d) + g + (hidden, d * hidden + hidden), scale)
            if layers > 1 else None]
    out += [Normal((layers, d) + gb + (hidden,), scale) if bias else None]
    return out


def _cases(name, ref, gates, bias_gates, n_states, extra_args=({},)):
    cases = []
    for steps, layers, bidirectional, bias in [(3, 1, False, True), (2, 2, True, True),
                                               (4, 2, False, False), (1, 1, True, False)]:
        for extra in extra_args:
            args = {"num_layers": layers, "bidirectional": bidirectional, **extra}
            tag = "-".join(f"{v}" for v in extra.values())
            cases.append(Case(name, _inputs(gates, bias_gates, steps, 2, 3, 2, layers,
                                            bidirectional, bias, n_states),
                              args, ref=ref, id=f"T{steps}-L{layers}-D{int(bidirectional)}-"
                                                f"bias{int(bias)}{tag and '-' + tag}",
                              second_order=extra.get("nonlinearity") != "relu"))
    # Inference: the same forward, no backward (nnabla raises on it).
    cases.append(Case(name, _inputs(gates, bias_gates, 3, 2, 3, 2, 2, True, True, n_states),
                      {"num_layers": 2, "bidirectional": True, "training": False}, ref=ref,
                      grad=False, id="inference"))
    return cases


CASES = (_cases("RNN", ref_rnn, None, None, 1,
                ({"nonlinearity": "tanh"}, {"nonlinearity": "relu"}))
         + _cases("LSTM", ref_lstm, 4, 4, 2)
         + _cases("GRU", ref_gru, 3, 4, 1))
