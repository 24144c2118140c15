"""Native (C++) time steps of the recurrent layers (RNN, LSTM, GRU).

The generic kernels in :mod:`.recurrent` keep the layer/direction loops and the formulas;
these subclasses replace one direction's time loop: the input projection of all steps is
one GEMM as before, each step is one recurrent GEMM (``numpy.matmul`` into a reused buffer,
OpenBLAS on the shared thread pool) and one fused C++ pass over the gates
(``_native.lstm_forward_step`` and its kin, rows split over the pool), in place of the
~15 numpy operations of a generic cell. Backward runs the same way in reverse and ends
with the weight gradients as one GEMM per operand over all steps. The gates' activations
overwrite the input projection (they are what backward reads), so forward keeps per
step only the activations and the (batch, hidden) states.

float32 and float64 data of one dtype take this path; anything else runs the generic code.
"""
from __future__ import annotations

import numpy as np

from .. import _native
from . import recurrent

NATIVE_DTYPES = (np.float32, np.float64)


def _native_ok(*arrays):
    present = [a for a in arrays if a is not None]
    return present[0].dtype in NATIVE_DTYPES and all(
        a.dtype == present[0].dtype for a in present)


def _order(steps, reverse):
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _previous(seq, start, t, reverse):
    """The state before step ``t``: ``start`` at the first step of the direction."""
    first = seq.shape[0] - 1 if reverse else 0
    if t == first:
        return start
    return seq[t + 1] if reverse else seq[t - 1]


def _shifted(seq, start, reverse):
    """All states before each step, (steps, batch, hidden): [start, seq[:-1]] (forward)."""
    out = np.empty_like(seq)
    if reverse:
        out[:-1] = seq[1:]
        out[-1] = start
    else:
        out[1:] = seq[:-1]
        out[0] = start
    return out


def _projection(seq, wx, bx):
    """gx = seq @ wx^T + bx as a C-contiguous (steps, batch, width) array."""
    steps, batch = seq.shape[:2]
    gx = seq.reshape(steps * batch, -1) @ wx.T
    if bx is not None:
        gx += bx
    return gx.reshape(steps, batch, -1)


def _weight_grad(da_flat, seq, dgh_flat, h_prev):
    """[dgx^T seq, dgh^T h_prev]: the gradient of the (width, inputs + hidden) matrix."""
    steps, batch = seq.shape[:2]
    return np.concatenate([da_flat.T @ seq.reshape(steps * batch, -1),
                           dgh_flat.T @ h_prev.reshape(steps * batch, -1)], axis=1)


class _NativeSteps:
    """Shared checks: the native loop runs when data, weights and states share a float
    dtype; otherwise the generic ``_run``/``_run_back`` do."""

    def _run(self, seq, weight, bx, bh, state, reverse):
        if not _native_ok(seq, weight, bx, bh, *state):
            return super()._run(seq, weight, bx, bh, state, reverse)
        h = self.hidden
        wx, wh = weight[:, :-h], weight[:, -h:]
        start = tuple(np.ascontiguousarray(s, dtype=seq.dtype) for s in state)
        return self.native_run(seq, _projection(seq, wx, bx), wx, wh, bh, start, reverse)

    def _run_back(self, dhs, dstate, record):
        if not isinstance(record[0], str):          # recorded by the generic _run
            return super()._run_back(dhs, dstate, record)
        dtype = record[1].dtype
        dstate = tuple(np.array(d, dtype=dtype, order="C") for d in dstate)     # copies
        return self.native_run_back(np.ascontiguousarray(dhs, dtype=dtype), dstate,
                                    *record[1:])


class RNN(_NativeSteps, recurrent.RNN):
    """h_t = f(gx_t + h_{t-1} Wh^T); one C++ pass per step for f and its derivative."""

    def native_run(self, seq, gx, wx, wh, bh, start, reverse):
        steps, batch = gx.shape[:2]
        relu = self.nonlinearity != "tanh"
        hs = np.empty_like(gx)
        gh = np.empty_like(gx[0])
        h_prev = start[0]
        for t in _order(steps, reverse):
            np.matmul(h_prev, wh.T, out=gh)
            if bh is not None:
                gh += bh
            _native.rnn_forward_step(gx[t], gh, hs[t], relu)
            h_prev = hs[t]
        last = 0 if reverse else steps - 1
        return hs, (hs[last],), ("native", seq, wx, wh, start, hs, reverse)

    def native_run_back(self, dhs, dstate, seq, wx, wh, start, hs, reverse):
        steps = hs.shape[0]
        relu = self.nonlinearity != "tanh"
        da = np.empty_like(hs)
        rec = dstate[0]
        for t in _order(steps, not reverse):
            _native.rnn_backward_step(dhs[t], rec, hs[t], da[t], relu)
            np.matmul(da[t], wh, out=rec)
        flat = da.reshape(-1, da.shape[2])
        dseq = (flat @ wx).reshape(seq.shape)
        dweight = _weight_grad(flat, seq, flat, _shifted(hs, start[0], reverse))
        db = flat.sum(axis=0)
        return dseq, dweight, db, db, (rec,)


class LSTM(_NativeSteps, recurrent.LSTM):
    """Gates (i, f, g, o) in one C++ pass per step, forward and backward."""

    def native_run(self, seq, gx, wx, wh, bh, start, reverse):
        steps, batch = gx.shape[:2]
        h = self.hidden
        hs = np.empty((steps, batch, h), dtype=gx.dtype)
        cs, tcs = np.empty_like(hs), np.empty_like(hs)
        gh = np.empty_like(gx[0])
        h_prev, c_prev = start
        for t in _order(steps, reverse):
            np.matmul(h_prev, wh.T, out=gh)
            if bh is not None:
                gh += bh
            # gx[t] becomes the gates' activations (act may alias gx)
            _native.lstm_forward_step(gx[t], gh, c_prev, gx[t], cs[t], hs[t], tcs[t], batch, h)
            h_prev, c_prev = hs[t], cs[t]
        last = 0 if reverse else steps - 1
        return hs, (hs[last], cs[last]), ("native", seq, wx, wh, start, gx, hs, cs, tcs,
                                          reverse)

    def native_run_back(self, dhs, dstate, seq, wx, wh, start, act, hs, cs, tcs, reverse):
        steps, batch = act.shape[:2]
        h = self.hidden
        da = np.empty_like(act)
        rec, dc = dstate
        for t in _order(steps, not reverse):
            _native.lstm_backward_step(dhs[t], rec, dc, act[t], _previous(cs, start[1], t, reverse),
                                       tcs[t], da[t], batch, h)
            np.matmul(da[t], wh, out=rec)
        flat = da.reshape(-1, da.shape[2])
        dseq = (flat @ wx).reshape(seq.shape)
        dweight = _weight_grad(flat, seq, flat, _shifted(hs, start[0], reverse))
        db = flat.sum(axis=0)
        return dseq, dweight, db, db, (rec, dc)


class GRU(_NativeSteps, recurrent.GRU):
    """Gates (r, z, n) in one C++ pass per step; the candidate's recurrent bias is added
    to its share of the recurrent projection inside the step."""

    def native_run(self, seq, gx, wx, wh, bh, start, reverse):
        steps, batch = gx.shape[:2]
        h = self.hidden
        hs = np.empty((steps, batch, h), dtype=gx.dtype)
        hns = np.empty_like(hs)
        gh = np.empty_like(gx[0])
        # split_bias puts zeros in front of the candidate's recurrent bias: only that adds
        bhn = None if bh is None else np.ascontiguousarray(bh[2 * h:])
        h_prev = start[0]
        for t in _order(steps, reverse):
            np.matmul(h_prev, wh.T, out=gh)
            _native.gru_forward_step(gx[t], gh, bhn, h_prev, gx[t], hns[t], hs[t], batch, h)
            h_prev = hs[t]
        last = 0 if reverse else steps - 1
        return hs, (hs[last],), ("native", seq, wx, wh, start, gx, hs, hns, reverse)

    def native_run_back(self, dhs, dstate, seq, wx, wh, start, act, hs, hns, reverse):
        steps, batch = act.shape[:2]
        h = self.hidden
        dgx, dgh = np.empty_like(act), np.empty_like(act)
        direct = dstate[0]
        rec = None
        for t in _order(steps, not reverse):
            _native.gru_backward_step(dhs[t], rec, direct, act[t], hns[t],
                                      _previous(hs, start[0], t, reverse), dgx[t], dgh[t],
                                      batch, h)
            if rec is None:
                rec = np.empty_like(direct)
            np.matmul(dgh[t], wh, out=rec)
        fx, fh = dgx.reshape(-1, dgx.shape[2]), dgh.reshape(-1, dgh.shape[2])
        dseq = (fx @ wx).reshape(seq.shape)
        dweight = _weight_grad(fx, seq, fh, _shifted(hs, start[0], reverse))
        dstart = direct if rec is None else direct + rec
        return dseq, dweight, fx.sum(axis=0), fh.sum(axis=0), (dstart,)


KERNELS = {"RNN": RNN, "LSTM": LSTM, "GRU": GRU}
