"""The cudnn backend: context resolution, descriptors, device-less graph construction, the
plan cache, the environment settings; convolutions match the CPU on the emulation."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.ext_utils import explain, get_extension_context, set_strict_fallback
# First-party (plugins/nnabla_ext_cudnn, installed by `nox -s tests`): a missing or broken
# plugin must fail collection, not skip these tests.
from nnabla_ext.cudnn import config, graphs


def _frontend_reason():
    try:
        import cudnn
        cudnn.pygraph()
    except Exception as e:  # noqa: BLE001 - ImportError or a broken frontend
        return f"nvidia-cudnn-frontend is not usable: {type(e).__name__}: {e}"
    return None


needs_frontend = pytest.mark.skipif(_frontend_reason() is not None, reason=str(_frontend_reason()))


def test_cudnn_context_resolves_convolution_to_cudnn_and_the_rest_to_cuda():
    ctx = get_extension_context("cudnn", device_id="0", type_config="half")
    assert ctx.backend == ["cudnn:half", "cudnn:float", "cuda:half", "cuda:float", "cpu:float"]
    assert ctx.array_class == "CudaCachedArray"
    assert "cudnn:half: nnabla_ext.cudnn.kernels.Convolution accepts -> selected" in explain(
        F.convolution, ctx)
    assert "cuda:half: nnabla_ext.cpu.kernels.activation.ReLU accepts -> selected" in explain(
        F.relu, ctx)
    assert get_extension_context("cudnn").backend == ["cudnn:float", "cuda:float", "cpu:float"]


def test_a_convolution_with_too_many_spatial_axes_is_declined_to_cuda():
    text = explain(F.convolution, get_extension_context("cudnn"), pad=(0, 0, 0, 0))
    assert "cudnn:float: nnabla_ext.cudnn.kernels.Convolution declines" in text
    assert "1 to 3 spatial axes; given 4" in text and "cuda:float" in text.split("-> selected")[0]


@pytest.mark.parametrize("channel_last", [False, True])
def test_descriptors_describe_nnabla_layouts_as_cudnn_dims_and_strides(channel_last):
    x, w, y = ((2, 5, 6, 3), (4, 3, 3, 3), (2, 5, 6, 4)) if channel_last else \
        ((2, 3, 5, 6), (4, 3, 3, 3), (2, 4, 5, 6))
    d = graphs.descriptor(0, "float", "fprop", x, w, y, 1, 1, channel_last, (1, 1), (1, 1),
                          (1, 1))
    xd, xs = d.x_layout()
    assert xd == [2, 3, 5, 6]
    assert xs == ([90, 1, 18, 3] if channel_last else [90, 30, 6, 1])
    assert d.w_layout()[0] == [4, 3, 3, 3]


def test_one_dimensional_convolutions_become_two_dimensional_with_width_one():
    d = graphs.descriptor(0, "half", "dgrad", (3, 2, 2, 9), (4, 1, 3), (3, 2, 4, 7), 2, 2,
                          False, (0,), (1,), (1,))
    assert (d.batch, d.channels, d.out_channels, d.group) == (6, 2, 4, 2)
    assert (d.in_size, d.out_size, d.kernel, d.pad) == ((9, 1), (7, 1), (3, 1), (0, 0))


@needs_frontend
@pytest.mark.parametrize("mode", graphs.MODES)
@pytest.mark.parametrize("args", [dict(pad=(1, 1), stride=(1, 1), dilation=(1, 1), group=1),
                                  dict(pad=(0, 2), stride=(2, 1), dilation=(1, 2), group=3)])
def test_the_frontend_builds_each_graph_device_less_with_nnabla_shapes(mode, args):
    import cudnn
    from nnabla.function_spec import SPECS, bind_args, infer
    spec = SPECS["Convolution"]
    x, w = (2, 6, 9, 8), (6, 6 // args["group"], 3, 3)
    _, (y,) = infer(spec, [x, w, None], bind_args(spec, args))
    d = graphs.descriptor(0, "float", mode, x, w, y, 1, args["group"], False, args["pad"],
                          args["stride"], args["dilation"])
    graph, tensors = graphs.build_graph(cudnn, d)
    assert tensors["x"].get_dim() == d.x_layout()[0]
    assert tensors["y"].get_dim() == list(d.y_layout()[0])
    assert tensors["w"].get_dim() == d.w_layout()[0]


@needs_frontend
def test_plans_are_built_once_per_descriptor_over_a_thousand_mixed_calls():
    graphs.clear()
    before = dict(graphs.COUNTS)
    rng = np.random.RandomState(0)
    shapes = [(1, 2, 5, 5), (2, 2, 6, 4), (1, 2, 3, 7)]
    with nn.context_scope(get_extension_context("cudnn")), nn.auto_forward():
        w = nn.Variable.from_numpy_array(rng.randn(3, 2, 3, 3))
        for i in range(1000):
            x = nn.Variable.from_numpy_array(np.ones(shapes[i % 3]))
            F.convolution(x, w, pad=(1, 1))
    assert graphs.COUNTS["graphs"] - before["graphs"] == 3 == graphs.cache_size()
    assert graphs.COUNTS["hits"] - before["hits"] == 997
    assert graphs.COUNTS["handles"] == before["handles"]       # none without a device


def test_convolutions_on_cudnn_match_the_cpu_in_training(request):
    rng = np.random.RandomState(1)
    x, w, b = rng.randn(2, 3, 7, 7), rng.randn(4, 3, 3, 3), rng.randn(4)
    results = []
    for name in ("cpu", "cudnn"):
        with nn.context_scope(get_extension_context(name)):
            xv = nn.Variable.from_numpy_array(x, need_grad=True)
            wv = nn.Variable.from_numpy_array(w, need_grad=True)
            bv = nn.Variable.from_numpy_array(b, need_grad=True)
            y = F.deconvolution(F.relu(F.convolution(xv, wv, bv, pad=(1, 1), stride=(2, 2))),
                                wv, stride=(2, 2))
            set_strict_fallback(name != "cpu")
            try:
                F.sum(y).forward()
                F.sum(y).backward(clear_buffer=True)
            finally:
                set_strict_fallback(False)
            results.append([y.d.copy(), xv.g.copy(), wv.g.copy(), bv.g.copy()])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-4)


def test_settings_are_nnabla_environment_variables():
    s = config.from_environment({})
    assert s == config.Settings(workspace_limit=-1, deterministic=False, by_heuristic=True,
                                allow_tf32=False)
    s = config.from_environment({"NNABLA_CUDNN_WORKSPACE_LIMIT": "0",
                                 "NNABLA_CUDNN_DETERMINISTIC": "0",
                                 "NNABLA_CUDNN_ALGORITHM_BY_HEURISTIC": "0",
                                 "NNABLA_CUDA_ALLOW_TF32": "1"})
    assert (s.workspace_limit, s.deterministic, s.by_heuristic, s.allow_tf32) == (
        0, False, False, True)
    with pytest.raises(ValueError, match="NNABLA_CUDNN_WORKSPACE_LIMIT='lots'"):
        config.from_environment({"NNABLA_CUDNN_WORKSPACE_LIMIT": "lots"})


class _FakeGraph:
    """Records what finalize asks of the frontend; check_support fails like a graph with
    no plan left after the filters."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name, args))
            if name == "check_support":
                raise RuntimeError("no plan")
        return record


@needs_frontend
def test_finalize_applies_the_settings_and_names_both_variables_when_nothing_fits():
    import cudnn
    d = graphs.descriptor(0, "float", "fprop", (1, 1, 4, 4), (1, 1, 3, 3), (1, 1, 2, 2), 1, 1,
                          False, (0, 0), (1, 1), (1, 1))
    g = _FakeGraph()
    with pytest.raises(RuntimeError) as info:
        graphs.finalize(cudnn, g, d, config.Settings(workspace_limit=0, deterministic=True))
    assert "NNABLA_CUDNN_WORKSPACE_LIMIT=0" in str(info.value)
    assert "NNABLA_CUDNN_DETERMINISTIC=1" in str(info.value)
    names = [name for name, _ in g.calls]
    assert names[:3] == ["validate", "build_operation_graph", "create_execution_plans"]
    assert ("deselect_workspace_greater_than", (0,)) in g.calls
    notes = [args[0] for name, args in g.calls if name == "deselect_numeric_notes"]
    assert [cudnn.numerical_note.NONDETERMINISTIC] in notes          # deterministic
    assert any(cudnn.numerical_note.TENSOR_CORE in n for n in notes)  # no TF32 by default
