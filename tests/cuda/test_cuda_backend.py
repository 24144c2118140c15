"""The cuda backend through the core: registration, contexts, the backend kit on the
emulation (every function, solver and graph check against the CPU), memory choices."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
import nnabla_ext.cuda
from nnabla.ext_utils import get_extension_context, list_plugins, set_strict_fallback
from nnabla.testing.backend_kit import check_backend
from nnabla_ext.cuda import memory


def test_the_backend_kit_passes_every_function_solver_and_graph_check():
    report = check_backend("cuda")
    report.raise_on_failure()
    assert "functions: 228 passed, 0 failed, 0 not implemented" in report.table()
    assert "solvers: 18 passed, 0 failed" in report.table()


def test_the_backend_kit_passes_in_half():
    check_backend("cuda", type_config="half",
                  functions=["Affine", "Convolution", "MaxPooling", "BatchNormalization",
                             "Softmax", "Embed", "FusedConvolution"]).raise_on_failure()


def test_contexts_list_backends_as_nnabla_ext_cuda_does():
    assert get_extension_context("cuda").backend == ["cuda:float", "cpu:float"]
    ctx = get_extension_context("cuda", device_id="0", type_config="half")
    assert ctx.backend == ["cuda:half", "cuda:float", "cpu:float"]
    assert (ctx.array_class, ctx.device_id) == ("CudaCachedArray", "0")
    assert nnabla_ext.cuda.context(type_config="mixed_half").backend[0] == "cuda:mixed_half"
    with pytest.raises(ValueError, match="type_config.*'double'"):
        nnabla_ext.cuda.context(type_config="double")
    with pytest.raises(ValueError, match="device_id.*'3'.*2 CUDA device"):
        nnabla_ext.cuda.context(device_id="3")


def test_the_plugin_is_listed_active_with_what_it_registered():
    get_extension_context("cuda")
    [row] = [r for r in list_plugins() if r["name"] == "cuda"]
    assert row["status"] == "active" and row["distribution"] == "nnabla-ext-cuda"
    assert row["registered"]["kernels"] == {"cuda:float": 228, "cuda:half": 228}
    assert row["registered"]["array_families"] == ["cuda"]


def test_training_stays_on_the_device(monkeypatch):
    ctx = get_extension_context("cuda")
    set_strict_fallback(True)
    try:
        with nn.context_scope(ctx), nn.parameter_scope("cuda_mlp"):
            x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(4, 1, 6, 6))
            h = F.max_pooling(nn.parametric_functions.convolution(x, 3, (3, 3), pad=(1, 1)),
                              (2, 2))
            y = nn.parametric_functions.affine(F.relu(h), 2)
            loss = F.mean(F.squared_error(y, nn.Variable.from_numpy_array(np.ones((4, 2)))))
            solver = S.Adam(1e-2)
            solver.set_parameters(nn.get_parameters())
            losses, counted = [], _count_transfers(monkeypatch)
            for i in range(6):
                if i == 1:                  # the first step moved inputs and parameters
                    counted.update(to_host=0, to_device=0)
                loss.forward()
                solver.zero_grad()
                loss.backward()
                solver.update()
                losses.append(float(loss.d))
    finally:
        set_strict_fallback(False)
    assert counted == {"to_host": 5, "to_device": 0}      # only the five loss reads
    assert losses[-1] < losses[0]


def _count_transfers(monkeypatch):
    from nnabla.array_family import family
    fam, counted = family("cuda"), {"to_host": 0, "to_device": 0}

    def wrap(name, key):
        original = getattr(fam, name)

        def counting(a):
            counted[key] += 1
            return original(a)
        monkeypatch.setattr(fam, name, counting)

    wrap("to_numpy", "to_host")
    wrap("from_numpy", "to_device")
    return counted


def _on(name, build):
    with nn.context_scope(get_extension_context(name)):
        outputs = build()
        F.sink(*outputs).forward()
    return [o.d.copy() for o in outputs]


def test_warping_and_erasing_run_without_reading_device_arrays_back(monkeypatch):
    rng = np.random.RandomState(3)
    x, grid = rng.randn(2, 3, 5, 6), rng.uniform(-1.1, 1.1, (2, 4, 4, 2))

    def build():
        xv = nn.Variable.from_numpy_array(x)
        return [F.warp_by_grid(xv, nn.Variable.from_numpy_array(grid)),
                F.random_erase(xv, prob=1.0, n=2, seed=3)]
    ref = _on("cpu", build)
    out = _on_device_counting(build, monkeypatch)
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[1], ref[1])


def test_stft_builds_its_window_on_the_host_once_and_runs_on_the_device(monkeypatch):
    x = np.random.RandomState(4).randn(2, 64).astype(np.float32)

    def build():
        return list(F.stft(nn.Variable.from_numpy_array(x), 16, 4, 16))
    ref = _on("cpu", build)
    out = _on_device_counting(build, monkeypatch)
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _on_device_counting(build, monkeypatch):
    """The outputs of ``build`` on cuda; the forward pass reads nothing back to the host
    (inputs are copied to the device when first used)."""
    with nn.context_scope(get_extension_context("cuda")):
        outputs = build()
        counted = _count_transfers(monkeypatch)
        F.sink(*outputs).forward()
        assert counted["to_host"] == 0
    return [o.d.copy() for o in outputs]


def test_array_preferences_select_the_allocator():
    get_extension_context("cuda")
    try:
        nnabla_ext.cuda.prefer_unified_array()
        assert nnabla_ext.cuda.array_classes()[0] == "CudaCachedUnifiedArray"
        assert memory.current() == "CudaCachedUnifiedArray"
        assert get_extension_context("cuda").array_class == "CudaCachedUnifiedArray"
        nnabla_ext.cuda.prefer_cached_array(False)
        assert memory.current() == "CudaArray"
    finally:
        nnabla_ext.cuda.reset_array_preference()
    assert memory.current() == "CudaCachedArray"
    with pytest.raises(ValueError, match="use_array_class.*'CpuArray'"):
        memory.use_array_class("CpuArray")


def test_module_helpers_work_on_the_emulation():
    get_extension_context("cuda")
    assert nnabla_ext.cuda.get_devices() == ["0", "1"]  # the emulation has 2 devices
    assert nnabla_ext.cuda.get_device_count() == 2
    nnabla_ext.cuda.device_synchronize("0")
    nnabla_ext.cuda.synchronize()
    nnabla_ext.cuda.clear_memory_cache()
    assert set(nnabla_ext.cuda.memory_cache_stats()) == {"used", "total"}
    assert nnabla_ext.cuda.available() == (True, "")
