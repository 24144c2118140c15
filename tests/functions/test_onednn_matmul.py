"""Batched matrix products through oneDNN (``BatchMatmul`` of nnabla_ext/cpu/kernels/onednn.py)
against a float64 numpy reference, with oneDNN on and off (numpy's matmul, the fallback).

The reference multiplies in float64 with ``einsum`` (batch axes broadcast), and takes the
gradients from their formulas (dA = dy B^T, dB = A^T dy, transposed back when an input was
given transposed, summed over the batch axes an input broadcast). The engine tests check
the accumulation into existing gradients.
"""
import math
import os

import nnabla as nn
import nnabla.functions as F
import nnabla_ext.cpu as cpu
import numpy as np
import pytest
from kernel_harness import check_forked_child
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _onednn
from nnabla_ext.cpu.kernels import CPU_KERNELS, onednn

needs_onednn = pytest.mark.skipif(_onednn.conv is None,
                                  reason=f"oneDNN not available: {_onednn.reason}")


@pytest.fixture(params=[True, False], ids=["onednn", "numpy"])
def path(request):
    if request.param and _onednn.conv is None:
        pytest.skip(f"oneDNN not available: {_onednn.reason}")
    # "always": the small products of the cases on oneDNN too
    previous = _onednn.set_enabled("always" if request.param else False)
    yield request.param
    _onednn.set_enabled(previous)


# ----------------------------------------------------------------- reference
def _op(m, flag):
    return np.swapaxes(m, -1, -2) if flag else m


def _sum_to(g, shape):
    axes = tuple(i for i, (s, t) in enumerate(zip(shape, g.shape)) if s == 1 and t != 1)
    return g.sum(axis=axes, keepdims=True)


def ref_batch_matmul(a, b, ta, tb):
    """op(a) @ op(b) in float64, batch axes broadcast."""
    return np.einsum("...mk,...kn->...mn", _op(a.astype(np.float64), ta),
                     _op(b.astype(np.float64), tb))


def ref_grads(a, b, dy, ta, tb):
    """(ga, gb) in float64: the adjoints of ref_batch_matmul in the inputs' layouts."""
    big_a, big_b = _op(a.astype(np.float64), ta), _op(b.astype(np.float64), tb)
    dy = dy.astype(np.float64)
    da = np.einsum("...mn,...kn->...mk", dy, big_b)
    db = np.einsum("...mk,...mn->...kn", big_a, dy)
    return _sum_to(_op(da, ta), a.shape), _sum_to(_op(db, tb), b.shape)


def _kernel(a_shape, b_shape, ta, tb):
    spec = SPECS["BatchMatmul"]
    shapes = [a_shape, b_shape]
    bound, out_shapes = infer(spec, shapes,
                              bind_args(spec, {"transpose_a": ta, "transpose_b": tb}))
    return CPU_KERNELS["BatchMatmul"](spec, bound, shapes, out_shapes)


def _stored(shape, flag):
    """The shape an operand of logical shape (..., r, c) has when given transposed."""
    return shape[:-2] + (shape[-1], shape[-2]) if flag else shape


# (a's logical shape, b's logical shape): broadcast batch axes, odd sizes, a 1-wide matrix
SHAPES = [
    ((4, 16, 8), (4, 8, 12)),
    ((3, 1, 7, 5), (1, 4, 5, 9)),        # both broadcast
    ((1, 13, 6), (5, 6, 11)),            # a broadcast
    ((2, 3, 1, 9, 17), (2, 1, 4, 17, 1)),  # b broadcast; one output column
    ((6, 1, 33), (6, 33, 2)),            # one row
    ((64, 128, 32), (64, 32, 128)),      # the benchmark's shape, above the work threshold
]


@pytest.mark.parametrize("ta, tb", [(False, False), (False, True), (True, False), (True, True)])
@pytest.mark.parametrize("a_shape, b_shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_forward_and_gradients_match_reference(a_shape, b_shape, ta, tb, path):
    rng = np.random.RandomState(sum(a_shape) + 7 * ta + 3 * tb)
    a = rng.randn(*_stored(a_shape, ta)).astype(np.float32)
    b = rng.randn(*_stored(b_shape, tb)).astype(np.float32)
    k = _kernel(a.shape, b.shape, ta, tb)
    y = k.forward([a, b])[0]
    y_ref = ref_batch_matmul(a, b, ta, tb)
    assert y.shape == y_ref.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    dy = rng.randn(*y.shape).astype(np.float32)
    ga_ref, gb_ref = ref_grads(a, b, dy, ta, tb)
    for pd in ([True, True], [True, False], [False, True]):
        ga, gb = k.backward([a, b], [y], [dy], pd)
        for g, g_ref, want in ((ga, ga_ref, pd[0]), (gb, gb_ref, pd[1])):
            if not want:
                assert g is None
                continue
            assert g.shape == g_ref.shape
            np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-3)


def test_strided_views_are_read_in_place(path):
    """Operands that are views (every other row, a sliced batch) give numpy's result."""
    rng = np.random.RandomState(3)
    base_a = rng.randn(6, 20, 9).astype(np.float32)
    base_b = rng.randn(3, 9, 14).astype(np.float32)
    a, b = base_a[::2, ::2], base_b[:, :, 1:12]
    k = _kernel(a.shape, b.shape, False, False)
    np.testing.assert_allclose(k.forward([a, b])[0], ref_batch_matmul(a, b, False, False),
                               rtol=1e-4, atol=1e-4)


def test_backward_accumulates_into_existing_gradients(path):
    """Through the engine: a second backward adds to the leaves' gradients, and an input
    used by two products (once transposed, with a broadcast partner) gets the sum."""
    rng = np.random.RandomState(5)
    x = nn.Variable.from_numpy_array(rng.randn(4, 24, 16).astype(np.float32), need_grad=True)
    w = nn.Variable.from_numpy_array(rng.randn(1, 16, 24).astype(np.float32), need_grad=True)
    y = F.batch_matmul(x, w) + F.batch_matmul(w, x, transpose_a=True, transpose_b=True)
    loss = F.sum(y * y)
    for v in (x, w):
        v.grad.zero()
    loss.forward()
    loss.backward()
    first = [v.g.copy() for v in (x, w)]
    loss.backward()
    for v, g in zip((x, w), first):
        np.testing.assert_allclose(v.g, 2 * g, rtol=1e-5, atol=1e-3)
    xd, wd = x.d, w.d
    dy = 2 * (ref_batch_matmul(xd, wd, False, False) + ref_batch_matmul(wd, xd, True, True))
    gx1, gw1 = ref_grads(xd, wd, dy, False, False)
    gw2, gx2 = ref_grads(wd, xd, dy, True, True)
    np.testing.assert_allclose(first[0], gx1 + gx2, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(first[1], gw1 + gw2, rtol=1e-4, atol=1e-2)


@needs_onednn
def test_plans_are_cached_and_taken_only_where_expected():
    """oneDNN serves float32 products (a plan per shapes and strides, made once); float64,
    oneDNN off and, unless 'always', products under the work threshold or with large
    matrices keep numpy."""
    rng = np.random.RandomState(1)
    big = [rng.randn(16, 64, 64).astype(np.float32), rng.randn(16, 64, 64).astype(np.float32)]
    small = [rng.randn(2, 4, 3).astype(np.float32), rng.randn(2, 3, 5).astype(np.float32)]
    huge = [np.ones((1, 256, 512), np.float32), np.ones((1, 512, 256), np.float32)]
    assert 16 * 64 ** 3 >= onednn.MATMUL_MIN_WORK > 2 * 4 * 3 * 5
    assert 256 * 512 * 256 > onednn.MATMUL_MAX_PRODUCT >= 64 ** 3

    def made(mode, arrays, calls=1):
        previous = _onednn.set_enabled(mode)
        try:
            _onednn.conv.clear_matmul_cache()
            before = _onednn.conv.matmul_cache_stats()
            for _ in range(calls):
                k = _kernel(arrays[0].shape, arrays[1].shape, False, False)
                np.testing.assert_allclose(k.forward(arrays)[0],
                                           ref_batch_matmul(*arrays, False, False),
                                           rtol=1e-4, atol=1e-4)
            after = _onednn.conv.matmul_cache_stats()
            return after["misses"] - before["misses"], after["hits"] - before["hits"]
        finally:
            _onednn.set_enabled(previous)

    assert made(True, big, calls=3) == (1, 2)
    assert made(True, small) == (0, 0)
    assert made("always", small) == (1, 0)
    assert made(True, huge) == (0, 0)
    assert made("always", huge) == (1, 0)
    assert made(False, big) == (0, 0)
    assert made(True, [a.astype(np.float64) for a in big]) == (0, 0)


@needs_onednn
def test_refused_strides_fall_back_to_numpy():
    """A view oneDNN does not take (a negative stride) is multiplied by numpy, and the
    refusal is remembered by the kernel instead of asked again."""
    rng = np.random.RandomState(2)
    a = rng.randn(4, 40, 30).astype(np.float32)[:, ::-1]
    b = rng.randn(4, 30, 20).astype(np.float32)
    previous = _onednn.set_enabled("always")
    try:
        k = _kernel(a.shape, b.shape, False, False)
        for _ in range(2):
            np.testing.assert_allclose(k.forward([a, b])[0], ref_batch_matmul(a, b, 0, 0),
                                       rtol=1e-4, atol=1e-4)
        assert len(k.refused) == 1
    finally:
        _onednn.set_enabled(previous)


@needs_onednn
def test_matmul_plan_errors_name_the_problem():
    f32 = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(ValueError, match=r"a.shape\[-1\] \(4\) must equal b.shape\[-2\] \(5\)"):
        _onednn.conv.matmul_plan(f32, np.zeros((2, 5, 3), np.float32))
    with pytest.raises(ValueError, match="batch axis 0 does not broadcast: 2 and 3"):
        _onednn.conv.matmul_plan(f32, np.zeros((3, 4, 3), np.float32))
    with pytest.raises(ValueError, match="one rank, 2 to 12"):
        _onednn.conv.matmul_plan(f32, np.zeros((4, 3), np.float32))
    with pytest.raises(TypeError, match="b must be a float32 array"):
        _onednn.conv.matmul_plan(f32, np.zeros((2, 4, 3), np.float64))
    plan = _onednn.conv.matmul_plan(f32, np.zeros((2, 4, 3), np.float32))
    with pytest.raises(ValueError, match="another shape or strides"):
        plan.run(f32, np.zeros((2, 3, 4), np.float32).swapaxes(-1, -2).copy()[:, :, :2])


@needs_onednn
def test_thread_count_changes_rebuild_the_primitive():
    """A plan made for 2 threads and run after set_num_threads(1) (and back) gives the same
    results; a product under the convolutions' small-work bound stays on one thread."""
    rng = np.random.RandomState(7)
    a = rng.randn(32, 64, 48).astype(np.float32)
    b = rng.randn(32, 48, 64).astype(np.float32)
    n = cpu.get_num_threads()
    results = []
    try:
        for threads in (2, 1, 2):
            cpu.set_num_threads(threads)
            plan = _onednn.conv.matmul_plan(a, b)
            results.append(plan.run(a, b))
            assert plan.threads == threads
        small = np.ones((1, 8, 8), np.float32)
        assert _onednn.conv.matmul_plan(small, small).threads == 1
    finally:
        cpu.set_num_threads(n)
    y_ref = ref_batch_matmul(a, b, False, False)
    for y in results:
        np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    assert math.prod(y_ref.shape) == results[0].size


FORK_SETUP = """
import nnabla_ext.cpu as cpu
from nnabla_ext.cpu import _onednn
cpu.set_num_threads(2)
rng = np.random.RandomState(0)
a, b = rng.randn(32, 64, 48).astype(np.float32), rng.randn(32, 48, 64).astype(np.float32)
"""


@needs_onednn
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_forked_child_runs_products():
    """GNU OpenMP's team does not survive fork(): the child runs the product on one thread
    instead of waiting forever for the parent's workers."""
    check_forked_child(FORK_SETUP, "_onednn.conv.matmul_plan(a, b).run(a, b)")
