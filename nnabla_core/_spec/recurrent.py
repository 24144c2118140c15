"""Recurrent layers: rnn, lstm, gru (multi-layer, optionally bidirectional).

Shapes, with ``T`` steps, batch ``B``, input size ``I``, ``L`` layers, ``D``
directions (2 when ``bidirectional``), hidden size ``H`` and ``G`` gate blocks
(RNN: none, LSTM: 4, GRU: 3):

- ``x``: ``(T, B, I)``; ``h`` (and LSTM ``c``): ``(L, D, B, H)``;
- ``weight_l0``: ``(D, [G,] H, I + H)``: per gate, the input then the recurrent weights;
- ``weight``: ``(L - 1, D, [G,] H, D * H + H)`` for the layers above the first; it must be
  given exactly when ``num_layers > 1``;
- ``bias``: RNN ``(L, D, H)``, LSTM ``(L, D, 4, H)``, GRU ``(L, D, 4, H)`` (the GRU's
  candidate gate has separate input and recurrent biases);
- outputs ``y``: ``(T, B, D * H)``, ``h_n`` (and LSTM ``c_n``): ``(L, D, B, H)``.

``dropout`` is accepted and, as in nnabla's CPU implementation, has no effect.
"""
from __future__ import annotations

from .base import ALL_INPUTS, Arg, FunctionSpec, Input, Output

CATEGORY = "Neural Network Layer"
GATES = {"RNN": None, "LSTM": 4, "GRU": 3}
BIAS_GATES = {"RNN": None, "LSTM": 4, "GRU": 4}


def _expect(spec, name, given, expected, why=""):
    if tuple(given) != tuple(expected):
        raise spec.shape_error(name, str(tuple(expected)), given, why=why)


def _gated(g, *tail):
    """``tail`` with the gate axis ``g`` (if any) before its last two axes (H, inputs)."""
    return tuple(tail[:-2]) + ((g,) if g else ()) + tuple(tail[-2:])


def recurrent(spec, x, h, *rest, num_layers, bidirectional, **args):
    """Output shapes of RNN/LSTM/GRU; ``rest`` is ``([c,] weight_l0, weight, bias)``."""
    lstm = spec.name == "LSTM"
    c, (w0, w, b) = (rest[0], rest[1:]) if lstm else (None, rest)
    if num_layers < 1:
        raise spec.value_error("num_layers", "a positive number of layers", num_layers)
    if len(x) != 3:
        raise spec.shape_error("x", "3 dimensions (T, B, I)", x)
    steps, batch, in_size = x
    d = 2 if bidirectional else 1
    if len(h) != 4:
        raise spec.shape_error("h", "4 dimensions (L, D, B, H)", h)
    hidden = h[3]
    _expect(spec, "h", h, (num_layers, d, batch, hidden),
            why=f"num_layers={num_layers}, bidirectional={bidirectional}, x.shape={tuple(x)}")
    if lstm:
        _expect(spec, "c", c, h, why="c must have the shape of h")
    g = GATES[spec.name]
    _expect(spec, "weight_l0", w0, _gated(g, d, hidden, in_size + hidden))
    if num_layers > 1:
        if w is None:
            raise spec.value_error("weight", "an array", None,
                                   why=f"num_layers={num_layers} needs the weights of the "
                                       "layers above the first")
        _expect(spec, "weight", w, _gated(g, num_layers - 1, d, hidden, d * hidden + hidden))
    elif w is not None:
        raise spec.value_error("weight", "None", f"an array of shape {tuple(w)}",
                               why="weight cannot be given when num_layers == 1")
    if b is not None:
        bias_gates = BIAS_GATES[spec.name]
        _expect(spec, "bias", b, (num_layers, d) + ((bias_gates,) if bias_gates else ())
                + (hidden,))
    states = ((num_layers, d, batch, hidden),) * (2 if lstm else 1)
    return ((steps, batch, d * hidden),) + states


def _spec(name, snake, state_inputs, extra_args, outputs, doc):
    inputs = (Input("x"),) + state_inputs + (
        Input("weight_l0", parameter=True), Input("weight", optional=True, parameter=True),
        Input("bias", optional=True, parameter=True))
    args = ((Arg("num_layers", "int", 1),) + extra_args
            + (Arg("dropout", "float?", None), Arg("bidirectional", "bool", False),
               Arg("training", "bool", True)))
    return FunctionSpec(name, snake, CATEGORY, inputs, args, outputs, recurrent, ALL_INPUTS,
                        doc=doc)


SPECS = [
    _spec("RNN", "rnn", (Input("h"),),
          (Arg("nonlinearity", "str", "tanh", choices=("tanh", "relu")),),
          (Output("y"), Output("h_n")),
          "Elman RNN: h_t = act(W [x_t, h_{t-1}] + b), layer by layer and per direction. "
          "Backward needs `training=True`."),
    _spec("LSTM", "lstm", (Input("h"), Input("c")), (),
          (Output("y"), Output("h_n"), Output("c_n")),
          "LSTM with gates (i, f, g, o) = W [x_t, h_{t-1}] + b: c_t = s(f) c_{t-1} + s(i) "
          "tanh(g), h_t = s(o) tanh(c_t). Backward needs `training=True`."),
    _spec("GRU", "gru", (Input("h"),), (), (Output("y"), Output("h_n")),
          "GRU with gates r, z = s(W [x_t, h_{t-1}] + b) and n = tanh(W_n x_t + b_in + "
          "r (U_n h_{t-1} + b_hn)): h_t = (1 - z) n + z h_{t-1}. Backward needs "
          "`training=True`."),
]
