"""Kernels of the recurrent layers (RNN, LSTM, GRU), written against ``xp``.

Every layer and direction runs the same loop: the input projection of all steps is
one GEMM (``gx = X @ Wx^T + bx``), then each step adds the recurrent projection
(``gh = h @ Wh^T + bh``) and applies the cell. Backward is back-propagation through
time with the cell caches kept from forward; the weight gradients are again one GEMM
per layer and direction over all steps. A cell sees pre-activations with its gate
blocks side by side on the last axis (``G * H``).
"""
from __future__ import annotations

from ._base import Kernel


def _sigmoid(xp, a):
    return 0.5 * xp.tanh(0.5 * a) + 0.5     # tanh form: no overflow for large |a|


class _Recurrent(Kernel):
    """The layer/direction/time loops shared by RNN, LSTM and GRU.

    Subclasses set ``gates`` and ``n_states`` and define ``cell``/``cell_back`` and
    ``split_bias``/``bias_grad``. Inputs are ``x, *states, weight_l0, weight, bias``.
    """

    gates = 1
    n_states = 1
    _records = None

    def setup(self):
        self.directions = 2 if self.bidirectional else 1
        self.hidden = self.in_shapes[1][3]

    def _inputs(self, xs):
        x, n = xs[0], self.n_states
        states = list(xs[1:1 + n])
        w0, w, b = (list(xs[1 + n:]) + [None, None])[:3]
        return x, states, w0, w, b

    def _weight(self, w0, w, layer, d):
        """Layer ``layer``'s weights of direction ``d`` as a (G*H, inputs + H) matrix."""
        mat = w0[d] if layer == 0 else w[layer - 1, d]
        return mat.reshape(self.gates * self.hidden, -1)

    def forward(self, xs):
        x, states, w0, w, b = self._inputs(xs)
        finals = [self.xp.empty(s.shape, dtype=x.dtype) for s in states]
        records, seq = [], x
        for layer in range(self.num_layers):
            outs = []
            for d in range(self.directions):
                bx, bh = (None, None) if b is None else self.split_bias(b[layer, d])
                start = tuple(s[layer, d] for s in states)
                hs, state, record = self._run(seq, self._weight(w0, w, layer, d), bx, bh,
                                              start, reverse=d == 1)
                outs.append(hs)
                records.append(record)
                for final, value in zip(finals, state):
                    final[layer, d] = value
            seq = outs[0] if len(outs) == 1 else self.xp.concatenate(outs, axis=2)
        self._records = records
        return (seq, *finals)

    def _run(self, seq, weight, bx, bh, state, reverse):
        """One direction of one layer over all steps: (outputs, final state, record)."""
        xp, h = self.xp, self.hidden
        wx, wh = weight[:, :-h], weight[:, -h:]
        gx = seq @ wx.T
        if bx is not None:
            gx += bx
        steps = seq.shape[0]
        hs = xp.empty(seq.shape[:2] + (h,), dtype=seq.dtype)
        h_prev = xp.empty_like(hs)
        caches = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            h_prev[t] = state[0]
            gh = state[0] @ wh.T
            if bh is not None:
                gh += bh
            state, caches[t] = self.cell(gx[t], gh, state)
            hs[t] = state[0]
        return hs, state, (seq, wx, wh, h_prev, caches, reverse)

    def _run_back(self, dhs, dstate, record):
        """BPTT of one direction: (d seq, d weight matrix, d bx, d bh, d initial state)."""
        xp = self.xp
        seq, wx, wh, h_prev, caches, reverse = record
        steps, batch = seq.shape[:2]
        width = wx.shape[0]
        dgx = xp.empty((steps, batch, width), dtype=seq.dtype)
        dgh = xp.empty_like(dgx)
        for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
            dstate = (dstate[0] + dhs[t],) + tuple(dstate[1:])
            dgx[t], dgh[t], dstate = self.cell_back(dstate, caches[t])
            dstate = (dstate[0] + dgh[t] @ wh,) + tuple(dstate[1:])
        dseq = dgx @ wx
        dweight = xp.concatenate([dgx.reshape(-1, width).T @ seq.reshape(steps * batch, -1),
                                  dgh.reshape(-1, width).T @ h_prev.reshape(-1, self.hidden)],
                                 axis=1)
        return dseq, dweight, dgx.sum(axis=(0, 1)), dgh.sum(axis=(0, 1)), dstate

    def backward(self, xs, ys, dys, propagate_down):
        if not any(propagate_down):
            return [None] * len(xs)
        if not self.training:
            raise RuntimeError(f"{self.spec.api_name}: backward is not supported with "
                               "training=False (its forward keeps no intermediate values)")
        xp = self.xp
        x, states, w0, w, b = self._inputs(xs)
        if self._records is None:
            self.forward(xs)
        dys = [xp.zeros(s, dtype=x.dtype) if dy is None else dy
               for dy, s in zip(dys, self.out_shapes)]
        dstates = [xp.zeros_like(s) for s in states]
        dw0 = xp.zeros_like(w0)
        dw = None if w is None else xp.zeros_like(w)
        db = None if b is None else xp.zeros_like(b)
        dseq, h = dys[0], self.hidden
        for layer in range(self.num_layers - 1, -1, -1):
            dinput = 0
            for d in range(self.directions):
                final = tuple(ds[layer, d] for ds in dys[1:])
                dpart, dweight, dbx, dbh, dstart = self._run_back(
                    dseq[:, :, d * h:(d + 1) * h], final,
                    self._records[layer * self.directions + d])
                dinput = dinput + dpart
                target = dw0[d] if layer == 0 else dw[layer - 1, d]
                target[...] = dweight.reshape(target.shape)
                if db is not None:
                    db[layer, d] = self.bias_grad(dbx, dbh)
                for ds, value in zip(dstates, dstart):
                    ds[layer, d] = value
            dseq = dinput
        grads = [dseq, *dstates, dw0, dw, db][:len(xs)]
        return [g if p else None for g, p in zip(grads, propagate_down)]

    # A cell's contract: cell(gx, gh, state) -> (new state, cache) and
    # cell_back(d new state, cache) -> (d gx, d gh, d state along paths other than gh).
    def split_bias(self, b):
        return b.reshape(-1), None

    def bias_grad(self, dbx, dbh):
        return dbx


class RNN(_Recurrent):
    """h_t = tanh or relu of (W [x_t, h_{t-1}] + b)."""

    def cell(self, gx, gh, state):
        a = gx + gh
        h = self.xp.tanh(a) if self.nonlinearity == "tanh" else self.xp.maximum(a, 0)
        return (h,), h

    def cell_back(self, dstate, h):
        dh = dstate[0]
        da = dh * (1 - h * h) if self.nonlinearity == "tanh" else dh * (h > 0)
        return da, da, (0.0,)


class LSTM(_Recurrent):
    """Gates (i, f, g, o); c_t = s(f) c + s(i) tanh(g), h_t = s(o) tanh(c_t)."""

    gates = 4
    n_states = 2

    def cell(self, gx, gh, state):
        xp = self.xp
        h, c = state
        a = (gx + gh).reshape(h.shape[0], 4, -1)
        si, sf, so = (_sigmoid(xp, a[:, k]) for k in (0, 1, 3))
        tg = xp.tanh(a[:, 2])
        c_new = sf * c + si * tg
        tc = xp.tanh(c_new)
        return (so * tc, c_new), (si, sf, tg, so, c, tc)

    def cell_back(self, dstate, cache):
        si, sf, tg, so, c, tc = cache
        dh, dc = dstate
        dc = dc + dh * so * (1 - tc * tc)
        da = self.xp.stack([dc * tg * si * (1 - si), dc * c * sf * (1 - sf),
                            dc * si * (1 - tg * tg), dh * tc * so * (1 - so)], axis=1)
        da = da.reshape(da.shape[0], -1)
        return da, da, (0.0, dc * sf)

    def bias_grad(self, dbx, dbh):
        return dbx.reshape(4, -1)


class GRU(_Recurrent):
    """r, z = s(...); n = tanh(W_n x + b_in + r (U_n h + b_hn)); h_t = (1 - z) n + z h."""

    gates = 3

    def split_bias(self, b):
        bh = self.xp.zeros(3 * b.shape[1], dtype=b.dtype)
        bh[2 * b.shape[1]:] = b[3]        # the candidate's recurrent bias sits inside r (.)
        return b[:3].reshape(-1), bh

    def bias_grad(self, dbx, dbh):
        h = self.hidden
        return self.xp.concatenate([dbx.reshape(3, h), dbh[2 * h:].reshape(1, h)])

    def cell(self, gx, gh, state):
        xp, (h,), k = self.xp, state, self.hidden
        r = _sigmoid(xp, gx[:, :k] + gh[:, :k])
        z = _sigmoid(xp, gx[:, k:2 * k] + gh[:, k:2 * k])
        hn = gh[:, 2 * k:]
        n = xp.tanh(gx[:, 2 * k:] + r * hn)
        return ((1 - z) * n + z * h,), (r, z, n, hn, h)

    def cell_back(self, dstate, cache):
        r, z, n, hn, h = cache
        dh = dstate[0]
        dan = dh * (1 - z) * (1 - n * n)
        dar = dan * hn * r * (1 - r)
        daz = dh * (h - n) * z * (1 - z)
        xp = self.xp
        return (xp.concatenate([dar, daz, dan], axis=1),
                xp.concatenate([dar, daz, dan * r], axis=1), (dh * z,))


KERNELS = {"RNN": RNN, "LSTM": LSTM, "GRU": GRU}
