"""The native time steps of RNN, LSTM and GRU (``nnabla_ext.cpu.kernels.native_recurrent``
over ``_native.*_step``): against float64 numpy formulas of the cells written here, against
central differences of their own forward, against the generic numpy kernels they
override, and bit-equal on 1, 2 and 3 threads."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer

import nnabla_ext.cpu as cpu
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC, native_recurrent

GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


def _shapes(name, steps, batch, inputs, hidden, layers=1, directions=1, bias=True):
    g, states = GATES[name], 2 if name == "LSTM" else 1
    w0 = (directions, hidden, inputs + hidden) if g == 1 else (
        directions, g, hidden, inputs + hidden)
    wide = directions * hidden + hidden
    w = None if layers == 1 else ((layers - 1, directions, hidden, wide) if g == 1 else
                                  (layers - 1, directions, g, hidden, wide))
    b = None if not bias else ((layers, directions, hidden) if g == 1 else
                               (layers, directions, 4, hidden))
    return ([(steps, batch, inputs)] + [(layers, directions, batch, hidden)] * states
            + [w0, w, b])


def _kernel(table, name, shapes, args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    return table[name](spec, bound, shapes, out_shapes), out_shapes


def _inputs(shapes, dtype, seed=0, scale=0.5):
    rng = np.random.RandomState(seed)
    return [None if s is None else (rng.randn(*s) * scale).astype(dtype) for s in shapes]


def _run(table, name, shapes, args, xs, seed=1):
    kernel, out_shapes = _kernel(table, name, shapes, args)
    ys = kernel.forward(xs)
    rng = np.random.RandomState(seed)
    dys = [rng.randn(*s).astype(xs[0].dtype) for s in out_shapes]
    grads = kernel.backward(xs, list(ys), dys, [x is not None for x in xs])
    return kernel, ys, dys, grads


def test_native_kernels_are_in_the_cpu_table():
    for name in GATES:
        assert CPU_KERNELS[name] is getattr(native_recurrent, name)


CASES = [
    ("RNN", {}, dict(layers=1)),
    ("RNN", {"nonlinearity": "relu"}, dict(layers=2, directions=2)),
    ("RNN", {}, dict(layers=2, directions=2, bias=False)),
    ("LSTM", {}, dict(layers=1)),
    ("LSTM", {}, dict(layers=3, directions=2)),
    ("LSTM", {}, dict(layers=2, directions=1, bias=False)),
    ("GRU", {}, dict(layers=1)),
    ("GRU", {}, dict(layers=2, directions=2)),
    ("GRU", {}, dict(layers=1, directions=2, bias=False)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, args, dims", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_native_matches_generic(name, args, dims, dtype):
    shapes = _shapes(name, 5, 3, 4, 6, dims.get("layers", 1), dims.get("directions", 1),
                     dims.get("bias", True))
    args = {"num_layers": dims.get("layers", 1),
            "bidirectional": dims.get("directions", 1) == 2, **args}
    xs = _inputs(shapes, dtype)
    kn, ys_n, _, grads_n = _run(CPU_KERNELS, name, shapes, args, xs)
    kg, ys_g, _, grads_g = _run(GENERIC, name, shapes, args, xs)
    assert type(kn).__module__.endswith("native_recurrent")
    assert type(kg).__module__.endswith(".recurrent")
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(ys_n, ys_g):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    for a, b in zip(grads_n, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


# float64 formulas of one layer, one direction, written from the cells' definitions
# (LSTM gates i, f, g, o; GRU gates r, z, n with the candidate's recurrent bias inside r·).
def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def _reference(name, x, h0, c0, w, b, nonlinearity="tanh"):
    hidden = h0.shape[-1]
    g = GATES[name]
    w = w.reshape(g * hidden, -1)
    wx, wh = w[:, :-hidden], w[:, -hidden:]
    h, c, ys = h0, c0, []
    for t in range(x.shape[0]):
        if name == "RNN":
            a = x[t] @ wx.T + h @ wh.T + (0 if b is None else b.reshape(-1))
            h = np.tanh(a) if nonlinearity == "tanh" else np.maximum(a, 0)
        elif name == "LSTM":
            a = x[t] @ wx.T + h @ wh.T + (0 if b is None else b.reshape(-1))
            i, f, gg, o = np.split(a, 4, axis=1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
            h = _sigmoid(o) * np.tanh(c)
        else:
            bx = np.zeros(3 * hidden) if b is None else b[:3].reshape(-1)
            bn = np.zeros(hidden) if b is None else b[3]
            ax, ah = x[t] @ wx.T + bx, h @ wh.T
            r = _sigmoid(ax[:, :hidden] + ah[:, :hidden])
            z = _sigmoid(ax[:, hidden:2 * hidden] + ah[:, hidden:2 * hidden])
            n = np.tanh(ax[:, 2 * hidden:] + r * (ah[:, 2 * hidden:] + bn))
            h = (1 - z) * n + z * h
        ys.append(h)
    return np.stack(ys), h, c


@pytest.mark.parametrize("name, args", [("RNN", {}), ("RNN", {"nonlinearity": "relu"}),
                                        ("LSTM", {}), ("GRU", {})])
def test_forward_against_float64_formulas(name, args):
    shapes = _shapes(name, 6, 4, 5, 7)
    xs = _inputs(shapes, np.float32, seed=3)
    kernel, _ = _kernel(CPU_KERNELS, name, shapes, {"num_layers": 1, **args})
    ys = kernel.forward(xs)
    x64 = [None if a is None else a.astype(np.float64) for a in xs]
    h0 = x64[1][0, 0]
    c0 = x64[2][0, 0] if name == "LSTM" else None
    w0, b = x64[-3][0], x64[-1][0, 0]
    y, h, c = _reference(name, x64[0], h0, c0, w0, b, args.get("nonlinearity", "tanh"))
    np.testing.assert_allclose(ys[0], y, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(ys[1][0, 0], h, rtol=2e-5, atol=2e-6)
    if name == "LSTM":
        np.testing.assert_allclose(ys[2][0, 0], c, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name, args, dims", [
    ("RNN", {}, dict(layers=2, directions=2)),
    ("LSTM", {}, dict(layers=2, directions=2)),
    ("GRU", {}, dict(layers=2, directions=2)),
])
def test_gradients_against_central_differences(name, args, dims):
    """float64: the backward of the native kernel equals the numerical gradient of its own
    forward of sum(y * wy) + sum(h_n * wh) (+ sum(c_n * wc)), for every input."""
    shapes = _shapes(name, 4, 2, 3, 3, dims["layers"], dims["directions"])
    args = {"num_layers": dims["layers"], "bidirectional": dims["directions"] == 2, **args}
    xs = _inputs(shapes, np.float64, seed=5)
    kernel, _, dys, grads = _run(CPU_KERNELS, name, shapes, args, xs, seed=6)

    def loss(values):
        fresh, _ = _kernel(CPU_KERNELS, name, shapes, args)
        return sum(float((y * d).sum()) for y, d in zip(fresh.forward(values), dys))

    eps = 1e-6
    for k, (x, g) in enumerate(zip(xs, grads)):
        if x is None:
            assert g is None
            continue
        numeric = np.empty_like(x)
        for i in range(x.size):
            plus = [a if j != k else a.copy() for j, a in enumerate(xs)]
            minus = [a if j != k else a.copy() for j, a in enumerate(xs)]
            plus[k].reshape(-1)[i] += eps
            minus[k].reshape(-1)[i] -= eps
            numeric.reshape(-1)[i] = (loss(plus) - loss(minus)) / (2 * eps)
        np.testing.assert_allclose(g, numeric, rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name}: gradient of input {k}")


@pytest.fixture
def threads():
    before = cpu.get_num_threads()
    yield cpu.set_num_threads
    cpu.set_num_threads(before)


def _steps(rng):
    """Every native step, forward and backward, on a batch above their parallel threshold."""
    b, h = 64, 128
    f = np.float32
    gx4, gh4 = rng.randn(b, 4 * h).astype(f), rng.randn(b, 4 * h).astype(f)
    gx3, gh3 = rng.randn(b, 3 * h).astype(f), rng.randn(b, 3 * h).astype(f)
    state, dh, rec = (rng.randn(b, h).astype(f) for _ in range(3))
    act4, c, hh, tc = np.empty_like(gx4), np.empty_like(state), np.empty_like(state), \
        np.empty_like(state)
    _native.lstm_forward_step(gx4, gh4, state, act4, c, hh, tc, b, h)
    dc, da = state.copy(), np.empty_like(gx4)
    _native.lstm_backward_step(dh, rec, dc, act4, state, tc, da, b, h)
    act3, hn, hg = np.empty_like(gx3), np.empty_like(state), np.empty_like(state)
    _native.gru_forward_step(gx3, gh3, rec[0], state, act3, hn, hg, b, h)
    direct, dgx, dgh = dh.copy(), np.empty_like(gx3), np.empty_like(gx3)
    _native.gru_backward_step(dh, rec, direct, act3, hn, state, dgx, dgh, b, h)
    wide = rng.randn(300_000).astype(f)                  # the RNN steps' element threshold
    hr, dr = np.empty_like(wide), np.empty_like(wide)
    _native.rnn_forward_step(wide, wide[::-1].copy(), hr, False)
    _native.rnn_backward_step(wide, wide, hr, dr, False)
    return [act4, c, hh, tc, dc, da, act3, hn, hg, direct, dgx, dgh, hr, dr]


def test_steps_give_the_same_bits_on_any_thread_count(threads):
    results = []
    for n in (1, 2, 3):
        threads(n)
        results.append(_steps(np.random.RandomState(0)))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(GATES))
def test_layers_agree_on_any_thread_count(name, threads):
    """Whole layers: the steps are bit-equal (above), OpenBLAS's products need not be."""
    shapes = _shapes(name, 3, 64, 16, 128, 1, 2)
    args = {"num_layers": 1, "bidirectional": True}
    xs = _inputs(shapes, np.float32, seed=7, scale=0.1)
    results = []
    for n in (1, 2):
        threads(n)
        _, ys, _, grads = _run(CPU_KERNELS, name, shapes, args, xs)
        results.append([*ys, *(g for g in grads if g is not None)])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_step_entry_points_refuse_bad_outputs():
    b, h = 2, 3
    gx, gh = np.zeros((b, 4 * h), np.float32), np.zeros((b, 4 * h), np.float32)
    c = np.zeros((b, h), np.float32)
    outs = [np.zeros((b, h), np.float32) for _ in range(3)]
    _native.lstm_forward_step(gx, gh, c, gx, *outs, b, h)          # act may be gx
    with pytest.raises(TypeError, match="argument 'c' must be a C-contiguous array of float32"):
        _native.lstm_forward_step(gx, gh, c, gx, np.zeros((b, h)), *outs[1:], b, h)
    with pytest.raises(TypeError, match="argument 'h' must be a C-contiguous"):
        _native.lstm_forward_step(gx, gh, c, gx, outs[0], np.zeros((h, b), np.float32).T,
                                  outs[2], b, h)
    with pytest.raises(ValueError, match="argument 'act' has 6 elements; expected 24"):
        _native.lstm_forward_step(gx, gh, c, np.zeros(6, np.float32), *outs, b, h)
    frozen = np.zeros((b, h), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="argument 'tc' is read-only"):
        _native.lstm_forward_step(gx, gh, c, gx, *outs[:2], frozen, b, h)
    with pytest.raises(ValueError, match="argument 'dh_rec' has 5 elements"):
        _native.gru_backward_step(None, np.zeros(5, np.float32), c, np.zeros((b, 3 * h),
                                  np.float32), c, c, *(np.zeros((b, 3 * h), np.float32),) * 2,
                                  b, h)


def test_step_formulas_with_absent_gradients():
    """None for dh_out/dh_rec means zero: an LSTM step with only dc flowing back."""
    rng = np.random.RandomState(8)
    b, h = 3, 5
    gx, gh = rng.randn(b, 4 * h), rng.randn(b, 4 * h)
    c_prev = rng.randn(b, h)
    act, c, hh, tc = np.empty((b, 4 * h)), np.empty((b, h)), np.empty((b, h)), np.empty((b, h))
    _native.lstm_forward_step(gx, gh, c_prev, act, c, hh, tc, b, h)
    i, f, g, o = np.split(gx + gh, 4, axis=1)
    np.testing.assert_allclose(act, np.concatenate(
        [_sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)], axis=1), rtol=1e-12)
    np.testing.assert_allclose(c, _sigmoid(f) * c_prev + _sigmoid(i) * np.tanh(g), rtol=1e-12)
    dc = rng.randn(b, h)
    dc0 = dc.copy()
    da = np.empty_like(act)
    _native.lstm_backward_step(None, None, dc, act, c_prev, tc, da, b, h)
    np.testing.assert_allclose(dc, dc0 * _sigmoid(f), rtol=1e-12)
    np.testing.assert_allclose(da[:, 3 * h:], 0.0)          # no dh: the output gate gets 0
    np.testing.assert_allclose(da[:, h:2 * h], dc0 * c_prev * _sigmoid(f) * (1 - _sigmoid(f)),
                               rtol=1e-12)
