"""The functions that once ran through host copies (WarpByGrid, RandomErase,
ImageAugmentation, ONNXResize) run on the device: their generic kernels are rejected by the
strict emulation (so the emulation would catch a host round trip), the cuda table's kernels
run on it and give the CPU plugin's results, forward and backward, with a seed the same
random draws."""
import itertools

import numpy as np
import pytest
from nnabla.function_spec import SPECS, bind_args, infer
from nnabla.testing.function_cases import ALL_CASES
from nnabla_ext.cpu.kernels import GENERIC
from nnabla_ext.cuda._namespace import DeviceNamespace
from nnabla_ext.cuda.emulation import cupy as emulated
from nnabla_ext.cuda.kernels import CUDA_KERNELS, sampling, stochastic

XP = DeviceNamespace(emulated)
STRICTNESS = (TypeError, AttributeError)      # what the emulation raises, as CuPy does
FORMERLY_HOST_STAGED = ("WarpByGrid", "RandomErase", "ImageAugmentation", "ONNXResize")


def _kernel(table, name, shapes, xp, **args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, list(shapes), bind_args(spec, dict(args)))
    cls = table[name]
    k = cls.__new__(cls)
    k.xp = xp
    k.__init__(spec, bound, list(shapes), out_shapes)
    return k


def _run(table, xp, case):
    arrays = case.make_inputs()
    shapes = [None if a is None else np.shape(a) for a in arrays]
    kernel = _kernel(table, case.name, shapes, xp, **dict(case.args))
    xs = [None if a is None else xp.asarray(np.asarray(a)) for a in arrays]
    ys = kernel.forward(xs)
    grads = None
    if case.grad:
        rng = np.random.RandomState(7)
        dys = [xp.asarray(rng.randn(*y.shape).astype(np.float32)) for y in ys]
        grads = kernel.backward(xs, list(ys), dys, [a is not None for a in arrays])
    host = emulated.asnumpy if xp is XP else np.asarray
    return ([host(y) for y in ys],
            None if grads is None else [None if g is None else host(g) for g in grads])


@pytest.mark.parametrize("name", FORMERLY_HOST_STAGED)
def test_the_generic_kernel_is_rejected_and_the_device_kernel_matches_the_cpu(name):
    cases = [c for c in ALL_CASES if c.name == name]
    assert cases, f"no function case for {name}"
    rejected = []
    for case in cases:
        try:
            _run(GENERIC, XP, case)
        except STRICTNESS as e:
            rejected.append(f"{case}: {type(e).__name__}: {e}")
        (ref_y, ref_g), (y, g) = _run(GENERIC, np, case), _run(CUDA_KERNELS, XP, case)
        for a, b in zip(y, ref_y):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=str(case))
        for a, b in zip(g or [], ref_g or []):
            if b is not None:
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=str(case))
    assert rejected, (f"the generic {name} kernel now runs on the strict emulation: the "
                      "device kernel may be unnecessary")
    assert CUDA_KERNELS[name] is not GENERIC[name]


WARPS = [dict(mode=m, padding_mode=p, align_corners=a)
         for m, p, a in itertools.product(("linear", "nearest"), ("zero", "repeat", "reflect"),
                                          (False, True))]


@pytest.mark.parametrize("args", WARPS, ids=lambda a: "-".join(str(v) for v in a.values()))
@pytest.mark.parametrize("layout", ["2d", "2d-channel-last", "3d"])
def test_warp_by_grid_kernels_match_the_generic_kernel(args, layout):
    rng = np.random.RandomState(3)
    if layout == "3d":
        x, grid = rng.randn(2, 3, 3, 4, 5), rng.uniform(-1.6, 1.6, (2, 2, 3, 4, 3))
    elif layout == "2d":
        x, grid = rng.randn(2, 3, 5, 6), rng.uniform(-1.6, 1.6, (2, 4, 7, 2))
    else:
        x, grid = rng.randn(2, 5, 6, 3), rng.uniform(-1.6, 1.6, (2, 4, 7, 2))
        args = dict(args, channel_last=True)
    x, grid = x.astype(np.float32), grid.astype(np.float32)
    shapes = [x.shape, grid.shape]
    ref = _kernel(GENERIC, "WarpByGrid", shapes, np, **args)
    dev = _kernel(sampling.KERNELS, "WarpByGrid", shapes, XP, **args)
    (y_ref,), (y,) = ref.forward([x, grid]), dev.forward([XP.asarray(x), XP.asarray(grid)])
    np.testing.assert_allclose(y.get(), y_ref, rtol=1e-5, atol=1e-6)
    dy = rng.randn(*y_ref.shape).astype(np.float32)
    g_ref = ref.backward([x, grid], [y_ref], [dy], [True, True])
    g = dev.backward([XP.asarray(x), XP.asarray(grid)], [y], [XP.asarray(dy)], [True, True])
    np.testing.assert_allclose(g[0].get(), g_ref[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(g[1].get(), g_ref[1], rtol=1e-4, atol=1e-4)


def test_image_augmentation_draws_the_cpu_sequence_and_samples_on_the_device():
    x = np.random.RandomState(5).rand(2, 3, 9, 8).astype(np.float32)
    args = dict(shape=(3, 7, 6), pad=(1, 2), min_scale=0.8, max_scale=1.3, angle=0.4,
                aspect_ratio=1.3, distortion=0.1, flip_lr=True, flip_ud=True, brightness=0.1,
                brightness_each=True, contrast=1.2, contrast_each=True, noise=0.05, seed=11)
    ref = _kernel(GENERIC, "ImageAugmentation", [x.shape], np, **args)
    dev = _kernel(CUDA_KERNELS, "ImageAugmentation", [x.shape], XP, **args)
    for _ in range(2):                           # the generators advance alike
        (y_ref,), (y,) = ref.forward([x]), dev.forward([XP.asarray(x)])
        np.testing.assert_allclose(y.get(), y_ref, rtol=1e-4, atol=1e-5)
    (again,) = dev.recompute([XP.asarray(x)])
    np.testing.assert_array_equal(again.get(), y.get())


@pytest.mark.parametrize("share,channel_last", [(True, False), (False, False), (True, True),
                                                (False, True)])
def test_random_erase_counts_from_rectangles_and_matches_the_cpu(share, channel_last):
    shape = (3, 6, 7, 2) if channel_last else (3, 2, 6, 7)
    x = np.random.RandomState(6).randn(*shape).astype(np.float32)
    args = dict(prob=0.9, n=4, share=share, channel_last=channel_last, seed=5,
                area_ratios=(0.05, 0.6))
    ref = _kernel(GENERIC, "RandomErase", [shape], np, **args)
    dev = _kernel(stochastic.KERNELS, "RandomErase", [shape], XP, **args)
    (y_ref,), (y,) = ref.forward([x]), dev.forward([XP.asarray(x)])
    np.testing.assert_array_equal(y.get(), y_ref)
    assert (y_ref != x).any()
    dy = np.ones(shape, np.float32)
    (g_ref,), (g,) = (ref.backward([x], [y_ref], [dy], [True]),
                      dev.backward([XP.asarray(x)], [y], [XP.asarray(dy)], [True]))
    np.testing.assert_array_equal(g.get(), g_ref)
    # the host counts are what the device masks hold
    rng = np.random.RandomState(9)
    rects = dev.rectangles(rng)
    masks = dev.patch_masks(rects)
    per_patch = [int(m.sum()) * (dev.c if share else 1) for m in masks]
    assert list(dev.counts(rects)) == per_patch


def test_onnx_resize_builds_its_tables_once_and_runs_on_device_arrays():
    x = np.random.RandomState(8).randn(1, 2, 4, 5).astype(np.float32)
    args = dict(sizes=(1, 2, 7, 3), mode="linear",
                coordinate_transformation_mode="tf_crop_and_resize",
                roi=(0, 0, 0.1, -0.2, 1, 1, 0.9, 1.3), extrapolation_value=-3.0)
    ref = _kernel(GENERIC, "ONNXResize", [x.shape], np, **args)
    dev = _kernel(CUDA_KERNELS, "ONNXResize", [x.shape], XP, **args)
    assert isinstance(dev.outside, emulated.ndarray)
    assert all(isinstance(m, emulated.ndarray) for m in dev.matrices.values())
    (y_ref,), (y,) = ref.forward([x]), dev.forward([XP.asarray(x)])
    np.testing.assert_allclose(y.get(), y_ref, rtol=1e-6, atol=1e-6)
    assert (y_ref == -3.0).any()
    plain = _kernel(CUDA_KERNELS, "ONNXResize", [x.shape], XP, sizes=(1, 2, 8, 10))
    assert plain.outside is None
