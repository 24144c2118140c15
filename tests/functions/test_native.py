"""The native (C++) CPU kernels agree with the generic numpy kernels they override.

The native module is imported directly, never skipped: the kernel table silently falls back to
the generic kernels when the C++ build is missing, so a failed build must fail here (and in
``test_coverage.py::test_native_extension_is_built``).
"""
import itertools

import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla_ext.cpu import _native
from nnabla_ext.cpu.kernels import CPU_KERNELS, GENERIC, native
from nnabla_ext.cpu.kernels import _columns as generic
from nnabla_ext.cpu.kernels import neural_network as generic_nn

CONFIGS = [
    ("Convolution", [(4, 6, 9, 8), (8, 3, 3, 3), (8,)],
     {"pad": (1, 2), "stride": (2, 1), "dilation": (1, 2), "group": 2}),
    ("Convolution", [(3, 7, 6, 6), (5, 3, 2, 6), (5,)], {"pad": (1, 0), "channel_last": True}),
    ("Convolution", [(2, 6, 9, 5, 4), (4, 2, 3, 3, 2), None],
     {"pad": (1, 1, 0), "stride": (1, 2, 1), "group": 2, "channel_last": True}),
    ("Convolution", [(2, 3, 11), (4, 3, 3), (4,)], {"pad": (2,), "dilation": (3,)}),
    ("Convolution", [(2, 2, 5, 4, 6), (3, 2, 2, 3, 2), None], {"stride": (2, 1, 3)}),
    ("Convolution", [(1, 2, 4, 3, 3, 3), (2, 2, 2, 2, 2, 2), None], {"pad": (1, 0, 1, 0)}),
    ("Deconvolution", [(3, 4, 5, 4), (4, 3, 3, 3), (6,)],
     {"pad": (1, 1), "stride": (2, 2), "group": 2, "output_padding": (1, 0)}),
    ("Deconvolution", [(2, 4, 3, 6), (6, 3, 2, 2), (4,)],
     {"stride": (2, 1), "dilation": (1, 2), "group": 2, "channel_last": True}),
    ("DepthwiseConvolution", [(2, 4, 7, 7), (8, 3, 3), (8,)],
     {"pad": (1, 1), "stride": (2, 2), "multiplier": 2}),
    ("DepthwiseConvolution", [(3, 5, 8, 9), (5, 3, 3), (5,)], {"pad": (1, 1)}),
    ("DepthwiseConvolution", [(2, 3, 9, 7), (9, 3, 2), None],
     {"pad": (2, 0), "stride": (1, 2), "dilation": (2, 3), "multiplier": 3}),
    ("DepthwiseConvolution", [(2, 3, 11), (3, 4), (3,)], {"pad": (3,), "stride": (3,)}),
    ("DepthwiseConvolution", [(2, 2, 4, 5, 6), (4, 2, 3, 2), (4,)],
     {"pad": (1, 0, 1), "stride": (2, 1, 1), "multiplier": 2}),
    ("DepthwiseConvolution", [(2, 3, 2, 5, 6), (2, 3, 3), None], {"base_axis": 2}),
    ("DepthwiseDeconvolution", [(2, 4, 5), (4, 3), (2,)], {"stride": (2,), "divisor": 2}),
    ("MaxPooling", [(2, 3, 7, 6)], {"kernel": (3, 2), "stride": (2, 1), "pad": (1, 1)}),
    ("MaxPooling", [(2, 7, 6, 5)], {"kernel": (2, 2), "ignore_border": False,
                                    "channel_last": True}),
    ("MaxPooling", [(2, 3, 5, 4, 6)], {"kernel": (2, 3, 2), "pad": (1, 1, 0)}),
    ("MaxPooling", [(3, 10)], {"kernel": (3,), "stride": (2,), "ignore_border": False}),
    ("AveragePooling", [(2, 3, 7, 6)], {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
    ("AveragePooling", [(2, 7, 6, 5)], {"kernel": (3, 2), "pad": (1, 1), "stride": (2, 2),
                                        "including_pad": False, "channel_last": True,
                                        "ignore_border": False}),
    ("AveragePooling", [(2, 2, 5, 4, 6)], {"kernel": (2, 2, 3), "ignore_border": False}),
    ("AveragePooling", [(2, 3, 7, 6)], {"kernel": (3, 2), "stride": (2, 3), "pad": (1, 1),
                                        "including_pad": False, "ignore_border": False}),
    ("AveragePooling", [(3, 2, 9)], {"kernel": (4,), "stride": (1,), "pad": (2,)}),
    ("SumPooling", [(2, 3, 7, 6)], {"kernel": (2, 3), "stride": (1, 2), "pad": (1, 0)}),
    ("SumPooling", [(2, 9, 4)], {"kernel": (2,), "channel_last": True}),
]


def _kernel(table, name, shapes, args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    return table[name](spec, bound, shapes, out_shapes)


def _run(table, name, shapes, args, dtype, seed=0):
    rng = np.random.RandomState(seed)
    xs = [None if s is None else rng.randn(*s).astype(dtype) for s in shapes]
    kernel = _kernel(table, name, shapes, args)
    ys = kernel.forward(xs)
    dys = [rng.randn(*y.shape).astype(dtype) for y in ys]
    grads = kernel.backward(xs, list(ys), dys, [x is not None for x in xs])
    return ys, grads


def _ids(configs):
    return [f"{name}-{i}" for i, (name, _, _) in enumerate(configs)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, shapes, args", CONFIGS, ids=_ids(CONFIGS))
def test_native_kernel_matches_generic_forward_and_backward(name, shapes, args, dtype):
    shapes = [None if s is None else tuple(s) for s in shapes]
    tol = 1e-4 if dtype == np.float32 else 1e-10
    ys_n, grads_n = _run(CPU_KERNELS, name, shapes, args, dtype)
    ys_g, grads_g = _run(GENERIC, name, shapes, args, dtype)
    for a, b in zip(ys_n, ys_g):
        assert a.dtype == dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    for a, b in zip(grads_n, grads_g):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == dtype
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_cpu_table_uses_the_native_kernels():
    for name, cls in native.KERNELS.items():
        # the oneDNN convolutions (kernels/onednn.py) subclass the native ones
        assert issubclass(CPU_KERNELS[name], cls)
        assert GENERIC[name] is not cls       # the generic kernel stays in GENERIC


@pytest.mark.parametrize("channel_last", [False, True])
@pytest.mark.parametrize("spatial, kernel, pad, stride, dilation", [
    ((9,), (3,), (1,), (2,), (1,)),
    ((6, 7), (3, 2), (1, 0), (1, 2), (2, 1)),
    ((4, 5, 3), (2, 3, 2), (0, 1, 1), (2, 1, 1), (1, 1, 2)),
])
def test_native_im2col_and_col2im_match_generic(spatial, kernel, pad, stride, dilation,
                                                channel_last):
    out = tuple(int((i + 2 * p - d * (k - 1) - 1) / s) + 1
                for i, k, p, s, d in zip(spatial, kernel, pad, stride, dilation))
    g = generic.ConvGeometry(3, 4, 2, spatial, out, kernel, pad, stride, dilation,
                             channel_last)
    x = np.random.RandomState(1).randn(*g.image_shape).astype(np.float32)
    lists = (list(spatial), list(out), list(kernel), list(pad), list(stride), list(dilation))
    col = _native.im2col(x, 3, 4, 2, *lists, channel_last).reshape(g.col_shape)
    np.testing.assert_array_equal(col, generic.im2col(np, x, g))
    image = _native.col2im(col, 3, 4, 2, *lists, channel_last).reshape(g.image_shape)
    np.testing.assert_allclose(image, generic.col2im(np, col, g), rtol=1e-6, atol=1e-6)


def test_native_max_pooling_breaks_ties_toward_the_first_element():
    shapes, args = [(1, 1, 4, 4)], {"kernel": (2, 2)}
    x = [np.ones(shapes[0], np.float32)]
    for table in (CPU_KERNELS, GENERIC):
        kernel = _kernel(table, "MaxPooling", shapes, args)
        ys = kernel.forward(x)
        (dx,) = kernel.backward(x, list(ys), [np.ones_like(ys[0])], [True])
        np.testing.assert_array_equal(dx[0, 0, ::2, ::2], 1)
        assert dx.sum() == 4


def test_native_kernels_handle_an_empty_batch():
    for name, shapes, args in [("Convolution", [(0, 2, 5, 5), (3, 2, 3, 3), (3,)], {}),
                               ("MaxPooling", [(0, 2, 4, 4)], {"kernel": (2, 2)}),
                               ("AveragePooling", [(0, 2, 4, 4)], {"kernel": (2, 2)})]:
        ys, grads = _run(CPU_KERNELS, name, shapes, args, np.float32)
        assert ys[0].shape[0] == 0 and grads[0].shape == shapes[0]


def test_native_helpers_reject_buffers_of_the_wrong_size():
    x = np.zeros((2, 3, 4, 4), np.float32)
    with pytest.raises(ValueError, match="x has"):
        _native.im2col(x, 3, 3, 1, [4, 4], [2, 2], [3, 3], [0, 0], [1, 1], [1, 1], False)
    with pytest.raises(ValueError, match="geometry"):
        _native.im2col(x, 2, 3, 1, [4, 4], [2, 2], [0, 3], [0, 0], [1, 1], [1, 1], False)


@pytest.mark.parametrize("table", [CPU_KERNELS, GENERIC], ids=["native", "generic"])
@pytest.mark.parametrize("name, shapes, args", CONFIGS, ids=_ids(CONFIGS))
def test_backward_reads_only_the_inputs_the_spec_names(name, shapes, args, table):
    shapes = [None if s is None else tuple(s) for s in shapes]
    rng = np.random.RandomState(0)
    xs = [None if s is None else rng.randn(*s).astype(np.float32) for s in shapes]
    kernel = _kernel(table, name, shapes, args)
    ys = kernel.forward(xs)
    dys = [rng.randn(*y.shape).astype(np.float32) for y in ys]
    needed = SPECS[name].needed_inputs(len(xs))
    pd = [x is not None for x in xs]
    full = kernel.backward(xs, list(ys), dys, pd)
    fresh = _kernel(table, name, shapes, args)   # no forward state either
    partial = fresh.backward([x if i in needed else None for i, x in enumerate(xs)],
                             [None] * len(ys), dys, pd)
    for a, b in zip(full, partial):
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("table", [CPU_KERNELS, GENERIC], ids=["native", "generic"])
@pytest.mark.parametrize("name, shapes, args", [c for c in CONFIGS if len(c[1]) > 2 and c[1][2]],
                         ids=_ids([c for c in CONFIGS if len(c[1]) > 2 and c[1][2]]))
def test_each_gradient_can_be_asked_for_alone(name, shapes, args, table):
    rng = np.random.RandomState(0)
    xs = [rng.randn(*s).astype(np.float32) for s in shapes]
    kernel = _kernel(table, name, [tuple(s) for s in shapes], args)
    ys = kernel.forward(xs)
    dys = [rng.randn(*y.shape).astype(np.float32) for y in ys]
    full = kernel.backward(xs, list(ys), dys, [True] * 3)
    for i in range(3):
        alone = kernel.backward(xs, list(ys), dys, [j == i for j in range(3)])
        assert [j for j, g in enumerate(alone) if g is not None] == [i]
        np.testing.assert_allclose(alone[i], full[i], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("by_abs, largest", [(False, True), (True, True), (False, False)])
def test_native_top_k_matches_a_stable_numpy_sort(by_abs, largest):
    from nnabla_ext.cpu import _native
    rng = np.random.RandomState(0)
    x = rng.randint(-5, 6, (7, 40)).astype(np.float32)    # many ties
    key = np.abs(x) if by_abs else x
    expected = np.argsort(-key if largest else key, axis=1, kind="stable")[:, :6]
    np.testing.assert_array_equal(_native.top_k(x, 7, 40, 6, by_abs, largest), expected)


# ------------------------------------------------------------------ batches in sample chunks
def _conv_reference(image, w, grid, pad, stride, dilation, group):
    """Direct 2-D convolution (NCHW) in float64, one kernel tap at a time.

    Returns (y, dx, dw) of y = conv(image, w) with output gradient ``grid``. A deconvolution
    is its adjoint: deconv(x) is the dx of grid x, and its input gradient is y of its dy.
    """
    image, w, grid = (a.astype(np.float64) for a in (image, w, grid))
    per, (kh, kw), out_per = w.shape[1], w.shape[2:], w.shape[0] // group
    padded = np.pad(image, ((0, 0), (0, 0), (pad[0],) * 2, (pad[1],) * 2))
    y, dpadded, dw = np.zeros(grid.shape), np.zeros_like(padded), np.zeros_like(w)
    for g, i, j in itertools.product(range(group), range(kh), range(kw)):
        ins, outs = slice(g * per, (g + 1) * per), slice(g * out_per, (g + 1) * out_per)
        taps = (slice(None), ins) + tuple(
            slice(k * d, k * d + (o - 1) * s + 1, s)
            for k, d, o, s in zip((i, j), dilation, grid.shape[2:], stride))
        y[:, outs] += np.einsum("nchw,oc->nohw", padded[taps], w[outs, :, i, j])
        dpadded[taps] += np.einsum("nohw,oc->nchw", grid[:, outs], w[outs, :, i, j])
        dw[outs, :, i, j] = np.einsum("nchw,nohw->oc", padded[taps], grid[:, outs])
    crop = (slice(None), slice(None)) + tuple(slice(p, p + n)
                                              for p, n in zip(pad, image.shape[2:]))
    return y, dpadded[crop], dw


CHUNKED = [   # batches of 7 and 5 that the budget splits into chunks of two samples
    ("Convolution", [(7, 4, 9, 8), (6, 2, 3, 3)],
     {"pad": (1, 2), "stride": (2, 1), "dilation": (1, 2), "group": 2}),
    ("Convolution", [(5, 6, 7, 8), (4, 2, 3, 4)],
     {"pad": (1, 0), "stride": (1, 2), "group": 2, "channel_last": True}),
    ("Deconvolution", [(7, 6, 4, 5), (6, 2, 3, 3)],
     {"pad": (1, 1), "stride": (2, 2), "dilation": (1, 2), "group": 2}),
]


def _chunked_kernel(table, name, shapes, args, monkeypatch):
    """The kernel with a column budget of two samples (several chunks for these batches)."""
    geo = _kernel(table, name, shapes, args).geo
    monkeypatch.setattr(generic_nn._ConvBase, "column_budget", 2 * geo.col_size // geo.batch)
    kernel = _kernel(table, name, shapes, args)
    assert [stop - start for start, stop, _ in kernel.chunks] == \
        [2] * (geo.batch // 2) + [1] * (geo.batch % 2)
    return kernel


def _nchw(a, channel_last):
    return np.moveaxis(a, -1, 1) if channel_last else a


@pytest.mark.parametrize("table", [CPU_KERNELS, GENERIC], ids=["native", "generic"])
@pytest.mark.parametrize("name, shapes, args", CHUNKED, ids=_ids(CHUNKED))
def test_chunked_convolution_matches_a_direct_reference(name, shapes, args, table,
                                                        monkeypatch):
    kernel = _chunked_kernel(table, name, [tuple(s) for s in shapes] + [None], args,
                             monkeypatch)
    rng = np.random.RandomState(0)
    x, w = (rng.randn(*s).astype(np.float32) for s in shapes)
    (y,) = kernel.forward([x, w, None])
    dy = rng.randn(*y.shape).astype(np.float32)
    dx, dw, _ = kernel.backward([x, w, None], [y], [dy], [True, True, False])
    last = args.get("channel_last", False)
    w_nchw = _nchw(w, last)
    conv = (args.get("pad", (0, 0)), args.get("stride", (1, 1)), args.get("dilation", (1, 1)),
            args.get("group", 1))
    if name == "Convolution":
        ref_y, ref_dx, ref_dw = _conv_reference(_nchw(x, last), w_nchw, _nchw(dy, last), *conv)
    else:  # the image is the deconvolution's output
        ref_dx, ref_y, ref_dw = _conv_reference(dy, w_nchw, x, *conv)
    for got, want in [(y, ref_y), (dx, ref_dx), (dw, ref_dw)]:
        np.testing.assert_allclose(_nchw(got, last), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch, per_sample, budget, sizes", [
    (32, 576 * 1024, 1 << 20, [1] * 32),     # ResNet-18 stage 1: one sample's columns
    (32, 27 * 1024, 1 << 20, [32]),          # the stem: the whole batch fits
    (7, 10, 25, [2, 2, 2, 1]),
    (9, 10, 40, [3, 3, 3]),                  # as even as the count allows
    (0, 10, 100, []),
])
def test_sample_chunks_cover_the_batch_evenly_within_the_budget(batch, per_sample, budget,
                                                                sizes):
    g = generic.ConvGeometry(batch, per_sample, 1, (1,), (1,), (1,), (0,), (1,), (1,), False)
    chunks = generic.sample_chunks(g, budget)
    assert [stop - start for start, stop, _ in chunks] == sizes
    assert [start for start, _, _ in chunks] == [sum(sizes[:i]) for i in range(len(sizes))]
    assert all(c.batch == stop - start and c.col_size <= max(budget, per_sample)
               for start, stop, c in chunks)


def test_native_im2col_and_col2im_write_into_the_given_array_or_refuse_it():
    x = np.random.RandomState(2).randn(2, 3, 5, 5).astype(np.float32)
    lists = ([5, 5], [3, 3], [3, 3], [0, 0], [1, 1], [1, 1])
    out = np.empty(3 * 9 * 2 * 9, np.float32)
    col = _native.im2col(x, 2, 3, 1, *lists, False, out=out)
    assert col is out
    np.testing.assert_array_equal(out, _native.im2col(x, 2, 3, 1, *lists, False))
    image = np.full(x.size, np.nan, np.float32)
    assert _native.col2im(col, 2, 3, 1, *lists, False, out=image) is image
    np.testing.assert_array_equal(image, _native.col2im(col, 2, 3, 1, *lists, False))
    for bad, error in [(np.empty(out.size, np.float64), TypeError),
                       (np.empty(2 * out.size, np.float32)[::2], TypeError),
                       (np.empty(out.size - 1, np.float32), ValueError)]:
        with pytest.raises(error):
            _native.im2col(x, 2, 3, 1, *lists, False, out=bad)


def test_chunked_deformable_convolution_matches_the_whole_batch(monkeypatch):
    from nnabla_ext.cpu.kernels import _deformable
    shapes = [(5, 4, 6, 6), (6, 2, 3, 3), (5, 36, 6, 6), (5, 18, 6, 6), (6,)]
    args = {"pad": (1, 1), "group": 2, "deformable_group": 2}
    rng = np.random.RandomState(3)
    xs = [rng.randn(*s).astype(np.float64) for s in shapes]
    results = []
    for budget in (10 ** 9, 4 * 2 * 9 * 36):       # the whole batch; two samples a chunk
        monkeypatch.setattr(_deformable.DeformableConvolution, "column_budget", budget)
        kernel = _kernel(CPU_KERNELS, "DeformableConvolution", shapes, args)
        (y,) = kernel.forward(xs)
        dy = np.random.RandomState(4).randn(*y.shape)
        results.append((len(kernel.chunks), [y] + kernel.backward(xs, [y], [dy], [True] * 5)))
    assert [count for count, _ in results] == [1, 3]
    for whole, chunked in zip(results[0][1], results[1][1]):
        assert chunked.shape == whole.shape
        np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12)


def test_default_threads():
    cores = native._usable_cores()
    assert native.default_threads({"NNABLA_CPU_NUM_THREADS": "3", "OMP_NUM_THREADS": "2"}) == 3
    assert native.default_threads({"OMP_NUM_THREADS": "2"}) == 2
    assert native.default_threads({"OMP_NUM_THREADS": "4,2"}) == 4
    assert native.default_threads({"NNABLA_CPU_NUM_THREADS": "0"}) == cores
    assert native.default_threads({}) == cores
    # BLAS with threads of its own (no shared pool): those spin, so one native thread
    assert native.default_threads({"OMP_NUM_THREADS": "2"}, shared_pool=False) == 1
    assert native.default_threads({}, shared_pool=False) == 1
    assert native.default_threads({"NNABLA_CPU_NUM_THREADS": "2"}, shared_pool=False) == 2
