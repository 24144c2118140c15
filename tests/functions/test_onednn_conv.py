"""Convolutions through oneDNN (nnabla_ext/cpu/kernels/onednn.py) against a float64 numpy
reference, with oneDNN on and off (the im2col + GEMM path it falls back to).

The reference below computes a convolution tap by tap on a zero-padded image (forward,
and the two adjoints: the data and weight gradients); a deconvolution is the data adjoint
of the convolution, as nnabla defines it. Gradients are also checked as directional
derivatives (a convolution is linear in each argument, so a central difference is exact
up to float32 rounding) and through the engine (accumulation into existing gradients).
"""
import itertools
import math
import os
import subprocess
import sys

import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest
from kernel_harness import check_forked_child
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _onednn
from nnabla_ext.cpu.kernels import CPU_KERNELS

ON_WHEEL_PLATFORM = sys.platform.startswith("linux") and os.uname().machine == "x86_64"
ONEDNN_OFF = os.environ.get("NNABLA_CPU_ONEDNN", "1").strip().lower() in (
    "0", "false", "off", "no")


def test_onednn_is_loaded_where_its_wheel_exists():
    """A build without the headers or a failed load must not pass silently on x86-64 Linux."""
    if not ON_WHEEL_PLATFORM or ONEDNN_OFF:
        pytest.skip("onednn-cpu-gomp exists for x86-64 Linux only, or NNABLA_CPU_ONEDNN=0")
    assert _onednn.conv is not None, _onednn.reason
    assert _onednn.conv.version()[:2] == (3, 2)


needs_onednn = pytest.mark.skipif(_onednn.conv is None,
                                  reason=f"oneDNN not available: {_onednn.reason}")


# ----------------------------------------------------------------- reference
def _taps(x_shape, w_kernel, pad, stride, dilation, out):
    """(kernel offset, slices of the padded image it reads for every output)."""
    for k in itertools.product(*map(range, w_kernel)):
        yield k, tuple(slice(ki * d, ki * d + (o - 1) * s + 1, s)
                       for ki, d, o, s in zip(k, dilation, out, stride))


def _out_shape(spatial, kernel, pad, stride, dilation):
    return tuple((i + 2 * p - d * (k - 1) - 1) // s + 1
                 for i, k, p, s, d in zip(spatial, kernel, pad, stride, dilation))


def _padded(x, pad, out, kernel, stride, dilation):
    """x (N, C, *S) zero-padded so that every tap of every output is inside."""
    widths = [(0, 0), (0, 0)]
    for i, p, o, k, s, d in zip(x.shape[2:], pad, out, kernel, stride, dilation):
        widths.append((p, max(0, (o - 1) * s + d * (k - 1) + 1 - p - i)))
    return np.pad(x, widths)


def ref_conv(x, w, pad, stride, dilation, groups):
    """y (N, OC, *O) of x (N, C, *S) and w (OC, C/G, *K), float64."""
    kernel = w.shape[2:]
    out = _out_shape(x.shape[2:], kernel, pad, stride, dilation)
    xp = _padded(x.astype(np.float64), pad, out, kernel, stride, dilation)
    n, oc = x.shape[0], w.shape[0]
    cg, og = x.shape[1] // groups, oc // groups
    y = np.zeros((n, oc) + out)
    for k, sl in _taps(x.shape, kernel, pad, stride, dilation, out):
        for g in range(groups):
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + k].astype(np.float64)
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    return y


def ref_conv_grads(x, w, dy, pad, stride, dilation, groups):
    """(dx, dw): the adjoints of ref_conv, float64."""
    kernel = w.shape[2:]
    out = dy.shape[2:]
    xp = _padded(x.astype(np.float64), pad, out, kernel, stride, dilation)
    dxp = np.zeros_like(xp)
    dw = np.zeros(w.shape)
    cg, og = x.shape[1] // groups, w.shape[0] // groups
    dy = dy.astype(np.float64)
    for k, sl in _taps(x.shape, kernel, pad, stride, dilation, out):
        for g in range(groups):
            cs = (slice(None), slice(g * cg, (g + 1) * cg)) + sl
            ws = (slice(g * og, (g + 1) * og), slice(None)) + k
            dyg = dy[:, g * og:(g + 1) * og]
            dxp[cs] += np.einsum("no...,oc->nc...", dyg, w[ws].astype(np.float64))
            summed = [0] + list(range(2, dy.ndim))     # batch and output positions
            dw[ws] += np.tensordot(dyg, xp[cs], axes=(summed, summed))
    inner = (slice(None), slice(None)) + tuple(slice(p, p + i) for p, i in zip(pad, x.shape[2:]))
    return dxp[inner], dw


def _to_last(a):
    return np.moveaxis(a, 1, -1)


def _to_first(a):
    return np.moveaxis(a, -1, 1)


# ----------------------------------------------------------------- kernels
def _kernel(name, shapes, args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    return CPU_KERNELS[name](spec, bound, shapes, out_shapes)


@pytest.fixture(params=[True, False], ids=["onednn", "im2col"])
def onednn(request):
    if request.param and _onednn.conv is None:
        pytest.skip(f"oneDNN not available: {_onednn.reason}")
    # "always": every geometry of the cases on oneDNN (not only those worth it)
    previous = _onednn.set_enabled("always" if request.param else False)
    yield request.param
    _onednn.set_enabled(previous)


# (x shape channel-first, oc, kernel, pad, stride, dilation, group, channel_last, bias)
CONV_CASES = [
    ((2, 4, 7, 6), 6, (3, 3), (1, 1), (2, 2), (1, 1), 2, False, True),
    ((3, 6, 9, 8), 8, (3, 2), (1, 2), (2, 1), (1, 2), 2, False, False),
    ((2, 5, 6, 6), 4, (3, 3), (2, 2), (1, 1), (2, 2), 1, False, True),     # dilated
    ((2, 8, 5, 5), 8, (3, 3), (1, 1), (1, 1), (1, 1), 4, False, True),     # grouped
    ((2, 6, 7, 5), 4, (3, 3), (1, 0), (1, 2), (1, 1), 2, True, True),      # channel-last
    ((1, 16, 8, 8), 16, (1, 1), (0, 0), (2, 2), (1, 1), 1, True, False),   # 1x1 strided
    ((2, 3, 11), 4, (3,), (2,), (1,), (3,), 1, False, True),               # 1-D
    ((2, 4, 5, 4, 6), 4, (2, 3, 2), (1, 0, 1), (2, 1, 3), (1, 1, 1), 2, False, True),  # 3-D
    ((2, 4, 5, 4, 3), 6, (2, 2, 2), (0, 1, 0), (1, 1, 1), (1, 2, 1), 2, True, False),
    ((4, 8, 8, 8), 8, (3, 3), (0, 0), (2, 2), (1, 1), 1, False, True),     # right edge unused
    # 147 KiB per sample: oneDNN runs the batch of 8 in 2 chunks of 4 (gradients summed)
    ((8, 4, 96, 96), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, False, True),
]


def _conv_ids():
    return [f"conv{len(c[0]) - 2}d-g{c[6]}{'-cl' if c[7] else ''}-{i}"
            for i, c in enumerate(CONV_CASES)]


@pytest.mark.parametrize("case", CONV_CASES, ids=_conv_ids())
def test_convolution_matches_reference(case, onednn):
    xshape, oc, kernel, pad, stride, dilation, group, channel_last, bias = case
    rng = np.random.RandomState(1)
    x = rng.randn(*xshape).astype(np.float32)
    w = rng.randn(oc, xshape[1] // group, *kernel).astype(np.float32)
    b = rng.randn(oc).astype(np.float32) if bias else None
    y_ref = ref_conv(x, w, pad, stride, dilation, group)
    if bias:
        y_ref += b.reshape((1, -1) + (1,) * len(kernel))
    dy = rng.randn(*y_ref.shape).astype(np.float32)
    dx_ref, dw_ref = ref_conv_grads(x, w, dy, pad, stride, dilation, group)
    if channel_last:
        x, y_ref, dy, dx_ref = _to_last(x), _to_last(y_ref), _to_last(dy), _to_last(dx_ref)
        w, dw_ref = _to_last(w), _to_last(dw_ref)
    shapes = [x.shape, w.shape, None if b is None else b.shape]
    k = _kernel("Convolution", shapes, {"pad": pad, "stride": stride, "dilation": dilation,
                                        "group": group, "channel_last": channel_last})
    assert (k.plan is not None) == onednn
    (y,) = k.forward([x, w, b])
    assert y.shape == y_ref.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    grads = k.backward([x, w, b], [y], [dy], [True, True, bias])
    np.testing.assert_allclose(grads[0], dx_ref, rtol=1e-4, atol=1e-4)
    # float32 sums of up to 8 * 96 * 96 terms: rounding grows with the largest entry
    w_atol = 2e-4 * max(1.0, float(np.abs(dw_ref).max()) / 100)
    np.testing.assert_allclose(grads[1], dw_ref, rtol=1e-4, atol=w_atol)
    if bias:
        axis = tuple(i for i in range(dy.ndim) if i != (dy.ndim - 1 if channel_last else 1))
        assert grads[2].shape == b.shape
        np.testing.assert_allclose(grads[2], dy.astype(np.float64).sum(axis), rtol=1e-4,
                                   atol=1e-4)
    # one gradient at a time (the bias alone takes another route on oneDNN)
    only_w = k.backward([x, w, b], [y], [dy], [False, True, False])
    assert only_w[0] is None and only_w[2] is None
    np.testing.assert_allclose(only_w[1], dw_ref, rtol=1e-4, atol=w_atol)
    if bias:
        only_b = k.backward([x, w, b], [y], [dy], [False, False, True])
        np.testing.assert_allclose(only_b[2], grads[2], rtol=1e-4, atol=1e-5)


# (x shape channel-first, out channels, kernel, pad, stride, dilation, group,
#  output_padding, channel_last)
DECONV_CASES = [
    ((2, 4, 5, 4), 6, (3, 3), (1, 1), (2, 2), (1, 1), 2, (1, 0), False),
    ((2, 6, 4, 5), 4, (2, 3), (0, 1), (1, 2), (2, 1), 2, (0, 1), True),
    ((3, 8, 4, 4), 8, (3, 3), (1, 1), (1, 1), (1, 1), 1, (0, 0), False),
    ((2, 4, 6), 2, (4,), (1,), (3,), (1,), 2, (2,), False),
    ((8, 4, 48, 48), 4, (3, 3), (1, 1), (2, 2), (1, 1), 1, (1, 1), True),  # 2 chunks
]


@pytest.mark.parametrize("case", DECONV_CASES,
                         ids=[f"deconv-{i}" for i in range(len(DECONV_CASES))])
def test_deconvolution_matches_reference(case, onednn):
    xshape, oc, kernel, pad, stride, dilation, group, opad, channel_last = case
    rng = np.random.RandomState(2)
    x = rng.randn(*xshape).astype(np.float32)
    w = rng.randn(xshape[1], oc // group, *kernel).astype(np.float32)
    b = rng.randn(oc).astype(np.float32)
    # nnabla's output size; the deconvolution is the data adjoint of the convolution
    # from y's grid to x's, with the weight (IC, OC/G, *K) as that convolution's weight.
    ospatial = tuple((i - 1) * s - 2 * p + d * (k - 1) + 1 + o for i, s, p, d, k, o in
                     zip(xshape[2:], stride, pad, dilation, kernel, opad))
    zeros = np.zeros((xshape[0], oc) + ospatial, np.float32)
    y_ref, _ = ref_conv_grads(zeros, w, x, pad, stride, dilation, group)
    y_ref = y_ref + b.reshape((1, -1) + (1,) * len(kernel))
    dy = rng.randn(*y_ref.shape).astype(np.float32)
    dx_ref = ref_conv(dy, w, pad, stride, dilation, group)
    _, dw_ref = ref_conv_grads(dy, w, x, pad, stride, dilation, group)
    db_ref = dy.astype(np.float64).sum(axis=tuple(i for i in range(dy.ndim) if i != 1))
    if channel_last:
        x, y_ref, dy, dx_ref = _to_last(x), _to_last(y_ref), _to_last(dy), _to_last(dx_ref)
        w, dw_ref = _to_last(w), _to_last(dw_ref)
    k = _kernel("Deconvolution", [x.shape, w.shape, b.shape],
                {"pad": pad, "stride": stride, "dilation": dilation, "group": group,
                 "output_padding": opad, "channel_last": channel_last})
    assert (k.plan is not None) == onednn
    (y,) = k.forward([x, w, b])
    assert y.shape == y_ref.shape
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    grads = k.backward([x, w, b], [y], [dy], [True, True, True])
    np.testing.assert_allclose(grads[0], dx_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(grads[1], dw_ref, rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(grads[2], db_ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("multiplier, stride, dilation", [(1, (1, 1), (1, 1)),
                                                          (2, (2, 1), (1, 2))])
def test_depthwise_convolution_and_deconvolution(multiplier, stride, dilation, onednn):
    rng = np.random.RandomState(3)
    c, pad = 6, (1, 1)
    x = rng.randn(2, c, 7, 6).astype(np.float32)
    w = rng.randn(c * multiplier, 3, 3).astype(np.float32)
    b = rng.randn(c * multiplier).astype(np.float32)
    wc = w.reshape(c * multiplier, 1, 3, 3)     # a convolution with one group per channel
    y_ref = ref_conv(x, wc, pad, stride, dilation, c) + b.reshape(1, -1, 1, 1)
    dy = rng.randn(*y_ref.shape).astype(np.float32)
    dx_ref, dw_ref = ref_conv_grads(x, wc, dy, pad, stride, dilation, c)
    k = _kernel("DepthwiseConvolution", [x.shape, w.shape, b.shape],
                {"pad": pad, "stride": stride, "dilation": dilation, "multiplier": multiplier})
    assert (k.plan is not None) == onednn
    (y,) = k.forward([x, w, b])
    np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)
    gx, gw, gb = k.backward([x, w, b], [y], [dy], [True, True, True])
    np.testing.assert_allclose(gx, dx_ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, dw_ref.reshape(w.shape), rtol=1e-4, atol=2e-4)
    np.testing.assert_allclose(gb, dy.sum(axis=(0, 2, 3)), rtol=1e-4, atol=1e-4)

    # depthwise deconvolution: divisor inputs per output channel; weight (C_in, *K)
    divisor = multiplier
    xd = rng.randn(2, c * divisor, 4, 5).astype(np.float32)
    wd = rng.randn(c * divisor, 3, 3).astype(np.float32)
    kd = _kernel("DepthwiseDeconvolution", [xd.shape, wd.shape, None],
                 {"pad": pad, "stride": stride, "dilation": dilation, "divisor": divisor})
    assert (kd.plan is not None) == onednn
    (yd,) = kd.forward([xd, wd, None])
    zeros = np.zeros(yd.shape, np.float32)
    yd_ref, _ = ref_conv_grads(zeros, wd.reshape(c * divisor, 1, 3, 3), xd, pad, stride,
                               dilation, c)
    np.testing.assert_allclose(yd, yd_ref, rtol=1e-4, atol=1e-4)
    dyd = rng.randn(*yd.shape).astype(np.float32)
    gxd, gwd, _ = kd.backward([xd, wd, None], [yd], [dyd], [True, True, False])
    np.testing.assert_allclose(
        gxd, ref_conv(dyd, wd.reshape(-1, 1, 3, 3), pad, stride, dilation, c), rtol=1e-4,
        atol=1e-4)
    _, dwd_ref = ref_conv_grads(dyd, wd.reshape(-1, 1, 3, 3), xd, pad, stride, dilation, c)
    np.testing.assert_allclose(gwd, dwd_ref.reshape(wd.shape), rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("channel_last", [False, True])
def test_gradients_are_directional_derivatives(channel_last, onednn):
    """<dy, conv(x + e u, w) - conv(x - e u, w)> / 2e = <dx, u> (and for w): exact up to
    float32 rounding, as the convolution is linear in each argument."""
    rng = np.random.RandomState(4)
    x = rng.randn(2, 4, 6, 5).astype(np.float32)
    w = rng.randn(6, 2, 3, 3).astype(np.float32)
    if channel_last:
        x, w = _to_last(x), _to_last(w)
    args = {"pad": (1, 1), "stride": (2, 1), "dilation": (1, 2), "group": 2,
            "channel_last": channel_last}
    k = _kernel("Convolution", [x.shape, w.shape, None], args)
    (y,) = k.forward([x, w, None])
    dy = rng.randn(*y.shape).astype(np.float32)
    gx, gw, _ = k.backward([x, w, None], [y], [dy], [True, True, False])
    eps = 0.5
    for which, grad in ((0, gx), (1, gw)):
        u = rng.randn(*grad.shape).astype(np.float32)
        plus, minus = [x, w, None], [x, w, None]
        plus[which] = plus[which] + eps * u
        minus[which] = minus[which] - eps * u
        diff = (k.forward(plus)[0].astype(np.float64) - k.forward(minus)[0]) / (2 * eps)
        np.testing.assert_allclose((dy * diff).sum(), (grad.astype(np.float64) * u).sum(),
                                   rtol=1e-4)


def test_backward_accumulates_into_existing_gradients(onednn):
    """Through the engine: a second backward adds to the leaves' gradients, and an input
    read by two convolutions gets the sum of both."""
    rng = np.random.RandomState(5)
    x = nn.Variable.from_numpy_array(rng.randn(2, 4, 6, 6).astype(np.float32),
                                     need_grad=True)
    w1 = nn.Variable.from_numpy_array(rng.randn(4, 4, 3, 3).astype(np.float32),
                                      need_grad=True)
    w2 = nn.Variable.from_numpy_array(rng.randn(4, 2, 3, 3).astype(np.float32),
                                      need_grad=True)
    y = F.convolution(x, w1, pad=(1, 1)) + F.convolution(x, w2, pad=(1, 1), group=2)
    loss = F.sum(y * y)
    for v in (x, w1, w2):
        v.grad.zero()
    loss.forward()
    loss.backward()
    first = [v.g.copy() for v in (x, w1, w2)]
    loss.backward()
    for v, g in zip((x, w1, w2), first):
        np.testing.assert_allclose(v.g, 2 * g, rtol=1e-5, atol=1e-4)
    # reference: dL/dy = 2 y
    xv, y_ref = x.d.astype(np.float64), None
    y_ref = ref_conv(xv, w1.d, (1, 1), (1, 1), (1, 1), 1) + ref_conv(
        xv, w2.d, (1, 1), (1, 1), (1, 1), 2)
    dy = 2 * y_ref
    dx1, dw1 = ref_conv_grads(xv, w1.d, dy, (1, 1), (1, 1), (1, 1), 1)
    dx2, dw2 = ref_conv_grads(xv, w2.d, dy, (1, 1), (1, 1), (1, 1), 2)
    np.testing.assert_allclose(first[0], dx1 + dx2, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(first[1], dw1, rtol=1e-4, atol=1e-2)
    np.testing.assert_allclose(first[2], dw2, rtol=1e-4, atol=1e-2)


@needs_onednn
def test_plans_are_cached_by_geometry():
    _onednn.conv.clear_cache()
    before = _onednn.conv.cache_stats()
    args = {"pad": (1, 1)}
    for _ in range(3):
        _kernel("Convolution", [(2, 3, 5, 5), (4, 3, 3, 3), None], args)
    _kernel("Convolution", [(3, 3, 5, 5), (4, 3, 3, 3), None], args)   # another batch
    after = _onednn.conv.cache_stats()
    assert after["misses"] - before["misses"] == 2
    assert after["hits"] - before["hits"] == 2
    _onednn.conv.set_cache_capacity(1)
    try:
        assert _onednn.conv.cache_stats()["size"] == 1
    finally:
        _onednn.conv.set_cache_capacity(128)


@needs_onednn
def test_threads_follow_set_num_threads():
    import nnabla_ext.cpu as cpu
    n = cpu.get_num_threads()
    try:
        cpu.set_num_threads(3)
        assert _onednn.conv.num_threads() == 3
    finally:
        cpu.set_num_threads(n)
    assert _onednn.conv.num_threads() == n


def test_set_enabled_refuses_when_missing(monkeypatch):
    monkeypatch.setattr(_onednn, "conv", None)
    monkeypatch.setattr(_onednn, "reason", "test")
    with pytest.raises(RuntimeError, match="oneDNN is not available"):
        _onednn.set_enabled(True)


def test_float64_and_unsupported_geometry_take_the_im2col_path(onednn):
    rng = np.random.RandomState(6)
    # four spatial axes: oneDNN has at most three
    k = _kernel("Convolution", [(1, 2, 3, 3, 3, 3), (2, 2, 2, 2, 2, 2), None], {})
    assert k.plan is None
    x = rng.randn(1, 2, 3, 3, 3, 3).astype(np.float32)
    w = rng.randn(2, 2, 2, 2, 2, 2).astype(np.float32)
    (y,) = k.forward([x, w, None])
    assert y.shape == (1, 2, 2, 2, 2, 2)
    # float64 arrays (as the native tests give them) on a oneDNN plan
    k = _kernel("Convolution", [(2, 3, 5, 5), (4, 3, 3, 3), None], {"pad": (1, 1)})
    x, w = rng.randn(2, 3, 5, 5), rng.randn(4, 3, 3, 3)
    (y,) = k.forward([x, w, None])
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, ref_conv(x, w, (1, 1), (1, 1), (1, 1), 1), rtol=1e-10)


@needs_onednn
@pytest.mark.parametrize("x_shape, w_shape, stride, expected", [
    ((64, 128, 8, 8), (128, 128, 3, 3), 1, True),    # 4,096 positions, 147,456 weights
    ((32, 64, 32, 32), (64, 64, 3, 3), 1, True),
    ((1, 512, 4, 4), (512, 512, 3, 3), 1, False),    # 16 positions, 2.4 M weights
    ((32, 256, 8, 8), (512, 256, 3, 3), 2, False),   # 512 positions, 1.2 M weights
    ((32, 64, 32, 32), (128, 64, 1, 1), 2, False),   # 1x1: a GEMM
    ((8, 32, 16, 16), (32, 1, 3, 3), 1, True),       # depthwise (32 groups)
])
def test_onednn_is_chosen_where_the_maps_outweigh_the_weights(x_shape, w_shape, stride,
                                                              expected):
    from nnabla_ext.cpu.kernels import onednn as kernels
    previous = _onednn.set_enabled(True)
    try:
        group = x_shape[1] // w_shape[1]
        k = _kernel("Convolution", [x_shape, w_shape, None],
                    {"pad": (w_shape[2] // 2,) * 2, "stride": (stride,) * 2, "group": group})
        assert (k.plan is not None) is expected
        assert kernels.worth_onednn(k.geo, k.grid_channels) is expected
        positions = x_shape[0] * math.prod(k.out_shapes[0][2:])
        assert (positions * kernels.WEIGHTS_PER_POSITION >= math.prod(w_shape)) is (
            expected or w_shape[2] == 1)
        _onednn.set_enabled("always")
        k = _kernel("Convolution", [x_shape, w_shape, None],
                    {"pad": (w_shape[2] // 2,) * 2, "stride": (stride,) * 2, "group": group})
        assert k.plan is not None
    finally:
        _onednn.set_enabled(previous)


def test_set_enabled_refuses_other_strings():
    with pytest.raises(ValueError, match="set_enabled: flag is 'sometimes'"):
        _onednn.set_enabled("sometimes")


@pytest.mark.skipif(not ON_WHEEL_PLATFORM or ONEDNN_OFF,
                    reason="onednn-cpu-gomp exists for x86-64 Linux only, or NNABLA_CPU_ONEDNN=0")
def test_environment_variable_always():
    code = "from nnabla_ext.cpu import _onednn; print(_onednn.enabled())"
    env = dict(os.environ, NNABLA_CPU_ONEDNN="always")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["always"]


@pytest.mark.skipif(not ON_WHEEL_PLATFORM, reason="onednn-cpu-gomp exists for x86-64 Linux only")
def test_environment_variable_turns_onednn_off():
    code = ("from nnabla_ext.cpu import _onednn; from nnabla_ext.cpu.kernels import onednn;"
            "print(_onednn.conv is None, _onednn.enabled(), _onednn.reason)")
    env = dict(os.environ, NNABLA_CPU_ONEDNN="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out[:2] == ["True", "False"] and "NNABLA_CPU_ONEDNN" in out[2]


@needs_onednn
def test_thread_count_changes_rebuild_the_primitives():
    """oneDNN fixes a primitive's thread count when it is made; a plan made for 2 threads
    and run after set_num_threads(1) (and back) gives the same results."""
    import nnabla_ext.cpu as cpu
    rng = np.random.RandomState(7)
    x = rng.randn(4, 8, 9, 9).astype(np.float32)
    w = rng.randn(8, 8, 3, 3).astype(np.float32)
    n = cpu.get_num_threads()
    results = []
    try:
        for threads in (2, 1, 2):
            cpu.set_num_threads(threads)
            k = _kernel("Convolution", [x.shape, w.shape, None], {"pad": (1, 1)})
            results.append(k.forward([x, w, None])[0])
    finally:
        cpu.set_num_threads(n)
    y_ref = ref_conv(x, w, (1, 1), (1, 1), (1, 1), 1)
    for y in results:
        np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-4)


FORK_SETUP = """
import nnabla_ext.cpu as cpu
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu.kernels import CPU_KERNELS
cpu.set_num_threads(2)
spec = SPECS["Convolution"]
shapes = [(8, 16, 16, 16), (16, 16, 3, 3), None]
bound, outs = infer(spec, shapes, bind_args(spec, {"pad": (1, 1)}))
k = CPU_KERNELS["Convolution"](spec, bound, shapes, outs)
assert k.plan is not None
rng = np.random.RandomState(0)
xs = [rng.randn(*shapes[0]).astype(np.float32), rng.randn(*shapes[1]).astype(np.float32), None]
"""


@needs_onednn
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
def test_forked_child_runs_convolutions():
    """GNU OpenMP's team does not survive fork(): the child runs oneDNN on one thread
    instead of waiting forever for the parent's workers."""
    check_forked_child(FORK_SETUP, "k.forward(xs)[0]")


@pytest.mark.skipif(not ON_WHEEL_PLATFORM or ONEDNN_OFF,
                    reason="onednn-cpu-gomp exists for x86-64 Linux only, or NNABLA_CPU_ONEDNN=0")
@pytest.mark.parametrize("user, expected", [
    ({}, {"GOMP_SPINCOUNT": "50000"}),
    ({"OMP_WAIT_POLICY": "active"}, {"OMP_WAIT_POLICY": "ACTIVE"}),
    ({"OMP_WAIT_POLICY": "passive"}, {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "0"}),
    ({"GOMP_SPINCOUNT": "1234"}, {"GOMP_SPINCOUNT": "1234"}),
])
def test_openmp_spins_briefly_unless_the_user_chose(user, expected):
    """libgomp prints its settings with OMP_DISPLAY_ENV=VERBOSE: our spin count unless the
    user set a wait policy or a spin count; ours does not leak into the environment that
    child processes inherit."""
    env = dict(os.environ, OMP_DISPLAY_ENV="VERBOSE")
    env.pop("GOMP_SPINCOUNT", None)
    env.pop("OMP_WAIT_POLICY", None)
    env.update(user)
    code = ("import os; from nnabla_ext.cpu import _onednn; assert _onednn.conv is not None;"
            "print(os.environ.get('GOMP_SPINCOUNT'), os.environ.get('OMP_WAIT_POLICY'))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    for name, value in expected.items():
        assert f"{name} = '{value}'" in done.stderr
    assert done.stdout.split() == [user.get("GOMP_SPINCOUNT", "None"),
                                    user.get("OMP_WAIT_POLICY", "None")]
    from nnabla_ext.cpu import _onednn
    assert _onednn.SPIN_COUNT == 50000
