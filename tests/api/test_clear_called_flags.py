"""nnabla.testing.clear_called_flag_recorder: what forward/backward clear, per function.

The expected flags are the ones nnabla 1.39 records for the same graphs (run once with
nnabla; written out here). Only the data flags of a backward step's inputs are not
compared: nnabla's kernels read (and so re-create) cleared inputs they do not need.
"""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.testing import clear_called_flag_recorder as recorder

T, F_ = True, False


@pytest.fixture
def record():
    def run(action):
        recorder.activate_clear_called_flag_recorder()
        try:
            action()
            return (recorder.get_input_clear_called_flags(),
                    recorder.get_output_clear_called_flags())
        finally:
            recorder.deactivate_clear_called_flag_recorder()
    return run


def _data(flags):
    return [[d for d, _ in per_function] for per_function in flags]


def _branches():
    """identity -> tanh -> mul2 with a second identity, add2 reusing tanh's output."""
    x1, x2 = nn.Variable([1, 5], need_grad=True), nn.Variable([1, 5], need_grad=True)
    h = F.tanh(F.identity(x1))
    k = F.mul2(h, F.identity(x2))
    return F.add_scalar(F.add2(k, h))


def test_forward_clear_no_need_grad_keeps_what_backward_reads(record):
    y = _branches()
    ins, outs = record(lambda: y.forward(clear_no_need_grad=True))
    assert _data(ins) == [[F_], [T], [F_], [F_, F_], [T, F_], [T]]
    assert len(outs) == 6 and all(len(o) == 1 for o in outs)


def test_forward_clear_buffer_clears_every_intermediate_at_its_last_use(record):
    y = _branches()
    ins, _ = record(lambda: y.forward(clear_buffer=True))
    assert _data(ins) == [[F_], [T], [F_], [F_, T], [T, T], [T]]


def test_backward_clear_buffer_clears_each_output_grad_after_its_step(record):
    y = _branches()
    y.forward(clear_no_need_grad=True)
    _, outs = record(lambda: y.backward(clear_buffer=True))
    assert outs == [[(F_, T)], [(T, T)], [(T, T)], [(T, T)], [(T, T)], [(T, T)]]


def _inplace_recompute():
    x = nn.Variable((2, 3), need_grad=True)
    x1 = F.sin(x).apply(recompute=True)
    x2 = F.reshape(x1, (3, 2), inplace=True).apply(recompute=True)
    return F.sin(F.sin(x2).apply(recompute=True))


def test_data_shared_in_place_is_not_cleared(record):
    y = _inplace_recompute()
    ins, _ = record(lambda: y.forward(clear_no_need_grad=True))
    assert _data(ins) == [[F_], [F_], [F_], [T]]
    # backward: the recomputation of sin(x2), then the four steps
    _, outs = record(lambda: y.backward(clear_buffer=True))
    assert outs == [[(F_, F_)], [(F_, T)], [(T, T)], [(F_, T)], [(T, T)]]


def _recompute_branches():
    x = nn.Variable((2, 3), need_grad=True)
    a = F.exp(F.identity(x).apply(recompute=True)).apply(recompute=True)
    c = nn.Variable((2, 3))
    b = F.cos(F.identity(c).apply(recompute=True)).apply(recompute=True)
    return F.sin(F.mul2(a, b).apply(recompute=True))


def test_recomputation_reruns_cleared_parents_and_clears_what_no_step_reads(record):
    y = _recompute_branches()
    ins, _ = record(lambda: y.forward(clear_no_need_grad=True))
    assert _data(ins) == [[F_], [T], [F_], [T], [T, T], [T]]
    ins, outs = record(lambda: y.backward(clear_buffer=True))
    # five re-runs (the cos branch needs no gradient: its input is cleared again), then
    # the backward steps sin, mul2, exp, identity
    assert _data(ins)[:5] == [[F_], [T], [F_], [T], [F_, F_]]
    assert outs == [[(F_, F_)], [(F_, F_)], [(F_, F_)], [(F_, F_)], [(F_, F_)],
                    [(F_, T)], [(T, T)], [(T, T)], [(T, T)]]


def _persistent_root():
    y = F.add_scalar(F.identity(nn.Variable((2,), need_grad=True)))
    y.persistent = True
    return y


def _root():
    return F.add_scalar(F.identity(nn.Variable((2,), need_grad=True)))


@pytest.mark.parametrize("build, grad, root_grad_cleared", [
    (_root, 1, T), (_root, np.ones(2), T), (_root, None, F_),
    (_root, "ndarray", F_), (_persistent_root, 1, F_), (_persistent_root, np.ones(2), F_)])
def test_the_root_grad_is_cleared_only_when_backward_made_it(record, build, grad,
                                                             root_grad_cleared):
    y = build()
    y.forward(clear_no_need_grad=True)
    if isinstance(grad, str):
        grad = nn.NdArray.from_numpy_array(np.ones(2, np.float32))
    _, outs = record(lambda: y.backward(grad, clear_buffer=True))
    assert outs == [[(F_, root_grad_cleared)], [(T, T)]]
    assert y.grad.clear_called is False


def test_recomputed_gradients_equal_the_analytic_ones():
    rng = np.random.RandomState(0)
    xv = rng.randn(2, 3).astype(np.float32)
    x = nn.Variable.from_numpy_array(xv, need_grad=True)
    h = F.sin(F.exp(x).apply(recompute=True)).apply(recompute=True)
    y = F.sum(F.tanh(h))
    y.forward(clear_no_need_grad=True)
    x.grad.zero()
    y.backward(clear_buffer=True)
    e = np.exp(xv.astype(np.float64))
    want = (1 - np.tanh(np.sin(e)) ** 2) * np.cos(e) * e
    np.testing.assert_allclose(x.g, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make_b, b_rebuilt", [
    (F.sin, False),                          # sin's backward reads x, not sin(x)
    (lambda v: F.mul_scalar(v, 2.0), False),  # reads nothing
    (F.exp, True),                           # exp's backward reads exp(x)
])
def test_backward_recomputes_only_the_cleared_data_a_backward_step_reads(make_b, b_rebuilt):
    """Deliberate difference (README): nnabla 1.39 also rebuilds ``b1`` for sin and
    mul_scalar (its per-function dependency table over-declares), wasted work that gives
    the same gradients. The no-need-grad branch ``a1`` is rebuilt by neither."""
    rng = np.random.RandomState(1)
    a0 = nn.Variable.from_numpy_array(rng.randn(2, 3).astype(np.float32))
    a1 = F.sin(a0).apply(recompute=True)
    bv = rng.randn(2, 3).astype(np.float32)
    b0 = nn.Variable.from_numpy_array(bv, need_grad=True)
    b1 = make_b(b0).apply(recompute=True)
    c = F.add2(a1, b1)
    c.forward(clear_no_need_grad=True)
    assert a1.data.clear_called and b1.data.clear_called
    b0.grad.zero()
    c.backward(clear_buffer=False)
    assert a1.data.clear_called is True
    assert b1.data.clear_called is (not b_rebuilt)
    x = bv.astype(np.float64)
    want = {F.sin: np.cos(x), F.exp: np.exp(x)}.get(make_b, np.full_like(x, 2.0))
    np.testing.assert_allclose(b0.g, want, rtol=1e-5, atol=1e-6)


def test_recorder_is_empty_when_inactive():
    recorder.deactivate_clear_called_flag_recorder()
    _branches().forward(clear_no_need_grad=True)
    assert recorder.get_input_clear_called_flags() == []
    assert recorder.get_output_clear_called_flags() == []


def test_the_recorder_doctest_passes():
    import doctest
    assert doctest.testmod(recorder).failed == 0


def test_backward_clear_buffer_keeps_what_another_graph_still_reads():
    xv = np.array([1.0, 2.0], np.float32)
    x = nn.Variable.from_numpy_array(xv, need_grad=True)
    h = F.mul_scalar(x, 3.0)
    y1 = F.sum(F.mul_scalar(h, 2.0))
    y2 = F.sum(h * h)                      # its backward reads h
    nn.forward_all([y1, y2])
    x.grad.zero()
    y1.backward(clear_buffer=True)
    assert not h.data.clear_called        # y2's graph reads it
    y2.backward(clear_buffer=True)
    np.testing.assert_allclose(x.g, 6 + 18 * xv)   # d/dx (6x + 9x^2)
