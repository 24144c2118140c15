"""Raw CUDA kernels: every source compiles with NVRTC for the target architectures, and
runs (compiled for the host, on the emulation) to the generic kernels' results."""
import numpy as np
import pytest
from nnabla.function_spec import SPECS, bind_args, infer
from nnabla_ext.cpu.kernels import GENERIC
from nnabla_ext.cuda import _host_cuda
from nnabla_ext.cuda._namespace import DeviceNamespace
from nnabla_ext.cuda.emulation import cupy as emulated
from nnabla_ext.cuda.kernels import raw

XP = DeviceNamespace(emulated)
ARCHS = ("80", "90", "100", "120")


def _nvrtc_reason():
    try:
        from cupy.cuda import nvrtc
        nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001 - ImportError, or the NVRTC library is missing
        return f"NVRTC is not available through CuPy: {type(e).__name__}: {e}"
    return None


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_every_raw_kernel_source_compiles_with_nvrtc_for_every_target_arch():
    from nnabla_ext.cuda import check
    results = check.compile_all(ARCHS)
    assert set(raw.sources()) == {"max_pooling_2d", "scatter_add_rows", "grid_sample"}
    assert {r[0] for r in results} == set(raw.sources()) and len(results) == 4 * len(
        raw.sources())
    assert [(r[0], r[2], r[4]) for r in results if r[4]] == []
    assert all(r[3] > 0 for r in results)


@pytest.mark.skipif(_nvrtc_reason() is not None, reason=str(_nvrtc_reason()))
def test_the_check_command_reports_kernels_and_function_coverage(capsys):
    from nnabla_ext.cuda import check
    assert check.main(["--arch", "80"]) == 0
    out = capsys.readouterr().out
    assert "6 raw kernels in 3 sources, 1 architectures: 3 compiled, 0 failed" in out
    assert "228 function types on 'cuda'" in out
    assert "raw CUDA: Embed, ImageAugmentation, MaxPooling, WarpByGrid" in out
    assert "cuTENSOR: Transpose" in out and "host draws: RandomErase" in out
    assert "host-staged" not in out


def test_a_broken_source_is_reported_not_raised(monkeypatch):
    from nnabla_ext.cuda import check
    monkeypatch.setattr(raw, "sources", lambda: {"broken": 'extern "C" __global__ void '
                                                           'f(float* x) { x[0] = y; }'})
    [(name, kernels, arch, size, error, _)] = check.compile_all(("80",), "nvcc") \
        if _nvrtc_reason() else check.compile_all(("80",))
    assert (name, kernels, size) == ("broken", ["f"], None) and "y" in error


def _kernel(table, name, shapes, xp, **args):
    spec = SPECS[name]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, args))
    cls = table[name]
    k = cls.__new__(cls)
    k.xp = xp
    k.__init__(spec, bound, list(shapes), out_shapes)
    return k


POOLS = [((2, 3, 7, 6), dict(kernel=(3, 2), stride=(2, 2), ignore_border=True, pad=(1, 0))),
         ((2, 3, 7, 6), dict(kernel=(3, 3), stride=(1, 1), ignore_border=False, pad=(1, 1))),
         ((2, 5, 6, 4), dict(kernel=(2, 2), stride=(1, 2), ignore_border=False, pad=(0, 0),
                             channel_last=True)),
         ((3, 4, 4), dict(kernel=(2, 2), stride=(2, 2), ignore_border=True, pad=(0, 0)))]


@pytest.mark.parametrize("shape,args", POOLS)
def test_raw_max_pooling_matches_the_generic_kernel_forward_and_backward(shape, args):
    rng = np.random.RandomState(0)
    x = np.round(rng.randn(*shape) * 2).astype(np.float32)      # many ties
    ref = _kernel(GENERIC, "MaxPooling", [shape], np, **args)
    dev = _kernel(raw.KERNELS, "MaxPooling", [shape], XP, **args)
    (y_ref,), (y,) = ref.forward([x]), dev.forward([XP.asarray(x)])
    np.testing.assert_array_equal(y.get(), y_ref)
    dy = rng.randn(*y_ref.shape).astype(np.float32)
    (dx_ref,), (dx,) = (ref.backward([x], [y_ref], [dy], [True]),
                        dev.backward([XP.asarray(x)], [y], [XP.asarray(dy)], [True]))
    np.testing.assert_allclose(dx.get(), dx_ref, rtol=1e-6, atol=1e-6)


def test_raw_max_pooling_keeps_the_first_maximum_in_tap_order_on_ties():
    x = np.ones((1, 1, 2, 2), np.float32)
    dev = _kernel(raw.KERNELS, "MaxPooling", [x.shape], XP, kernel=(2, 2), stride=(2, 2))
    (y,) = dev.forward([XP.asarray(x)])
    (dx,) = dev.backward([XP.asarray(x)], [y], [XP.asarray(np.full((1, 1, 1, 1), 3.0,
                                                                   np.float32))], [True])
    np.testing.assert_array_equal(dx.get().ravel(), [3, 0, 0, 0])


def test_raw_embed_gradient_accumulates_repeated_indices():
    idx = np.array([[1, 3, 1], [0, 1, 3]])
    w_shape = (5, 2, 2)
    dev = _kernel(raw.KERNELS, "Embed", [idx.shape, w_shape], XP)
    dy = np.random.RandomState(1).randn(2, 3, 2, 2).astype(np.float32)
    (_, dw) = dev.backward([XP.asarray(idx), None], [None], [XP.asarray(dy)], [False, True])
    expected = np.zeros(w_shape, np.float32)
    np.add.at(expected, idx.ravel(), dy.reshape(6, 2, 2))
    np.testing.assert_allclose(dw.get(), expected, rtol=1e-6)


def test_each_source_is_compiled_once_per_process_over_many_launches():
    x = XP.asarray(np.random.RandomState(2).randn(2, 2, 4, 4).astype(np.float32))
    for _ in range(50):
        k = _kernel(raw.KERNELS, "MaxPooling", [x.shape], XP, kernel=(2, 2), stride=(2, 2))
        k.forward([x])
    modules = [key for key in raw._modules if key[1] == "max_pooling_2d"]
    assert len(modules) == 1


def test_emulated_launches_refuse_arguments_of_the_wrong_c_type():
    kernel = emulated.RawKernel(raw.sources()["scatter_add_rows"], "scatter_add_rows")
    rows, out = XP.zeros(4, dtype=XP.float32), XP.zeros(4, dtype=XP.float32)
    index = XP.zeros(4, dtype=XP.int64)
    with pytest.raises(TypeError, match="given for parameter 'long long'"):
        kernel((1,), (4,), (rows, index, out, 4, np.int64(1), np.int64(4)))
    with pytest.raises(TypeError, match="float64 array given"):
        kernel((1,), (4,), (rows.astype(XP.float64), index, out, np.int64(4), np.int64(1),
                            np.int64(4)))
    kernel((1,), (4,), (rows + 1, index, out, np.int64(4), np.int64(1), np.int64(4)))
    assert float(out[0]) == 4.0


def test_the_host_shim_parses_kernel_signatures():
    sig = _host_cuda.kernel_signatures(raw.sources()["max_pooling_2d"])
    assert sorted(sig) == ["max_pooling_2d_backward", "max_pooling_2d_forward"]
    assert sig["max_pooling_2d_forward"][:3] == [("const float *", "x"), ("float *", "y"),
                                                 ("long long *", "arg")]
