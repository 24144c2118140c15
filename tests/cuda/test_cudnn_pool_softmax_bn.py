"""The cudnn backend's pooling, softmax and batch normalization: routing, the descriptors
cuDNN builds and checks without a device (libcudnn from nvidia-cudnn-cu13), the frontend's
batch-norm graphs constructed device-less, the caches; results match the CPU on the
emulation."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.ext_utils import explain, get_extension_context, set_strict_fallback
from nnabla.function_spec import SPECS, bind_args, infer
from nnabla_ext.cudnn import config, legacy, norm_graphs


def _library_reason():
    ok, reason = legacy.available()
    return None if ok else reason


def _frontend_reason():
    try:
        import cudnn
        cudnn.pygraph()
    except Exception as e:  # noqa: BLE001 - ImportError or a broken frontend
        return f"nvidia-cudnn-frontend is not usable: {type(e).__name__}: {e}"
    return None


needs_library = pytest.mark.skipif(_library_reason() is not None,
                                   reason=f"libcudnn is not loadable: {_library_reason()}")
needs_frontend = pytest.mark.skipif(_frontend_reason() is not None,
                                    reason=str(_frontend_reason()))


def test_pooling_softmax_and_batch_norm_resolve_to_cudnn():
    ctx = get_extension_context("cudnn")
    for f, name, args in ((F.max_pooling, "MaxPooling", dict(kernel=(2, 2))),
                          (F.average_pooling, "AveragePooling", dict(kernel=(2, 2))),
                          (F.sum_pooling, "SumPooling", dict(kernel=(2, 2))),
                          (F.softmax, "Softmax", {}), (F.log_softmax, "LogSoftmax", {}),
                          (F.batch_normalization, "BatchNormalization", {})):
        assert f"nnabla_ext.cudnn.kernels.{name} accepts -> selected" in explain(f, ctx, **args)
    text = explain(F.max_pooling, ctx, kernel=(2, 2), ignore_border=False)
    assert "cuDNN pools whole windows only (ignore_border=False)" in text
    assert "cuda:float: nnabla_ext.cuda.kernels.raw.MaxPooling accepts -> selected" in text


def _out_shape(name, shape, **args):
    spec = SPECS[name]
    _, (y,) = infer(spec, [shape], bind_args(spec, args))
    return y


POOLS = [((2, 3, 7, 6), dict(kernel=(3, 2), stride=(2, 2), pad=(1, 0))),
         ((2, 3, 4, 7, 6), dict(kernel=(2, 3, 2), stride=(1, 2, 2), pad=(1, 1, 0))),
         ((2, 5, 6, 4), dict(kernel=(2, 2), stride=(1, 2), channel_last=True)),
         ((3, 4, 9), dict(kernel=(3,), stride=(2,), pad=(1,)))]


@needs_library
@pytest.mark.parametrize("shape,args", POOLS)
@pytest.mark.parametrize("mode", [legacy.POOL_MAX, legacy.POOL_AVG_EXCLUDE_PAD])
def test_cudnn_builds_pooling_descriptors_device_less_and_agrees_on_the_output_shape(
        shape, args, mode):
    args = dict(args, ignore_border=True)
    y = _out_shape("MaxPooling", shape, **args)
    k = len(args["kernel"])
    key = legacy.pooling_key(0, "float", mode, shape, y, args["kernel"],
                             args.get("pad", (0,) * k), args["stride"],
                             args.get("channel_last", False))
    desc = legacy.PoolingDescriptor(key)          # cuDNN derives y's dims and they agree
    assert desc.x.dims == list(key.x_dims) and len(key.x_dims) == max(k, 2) + 2
    if args.get("channel_last"):
        assert key.x_dims == (2, 4, 5, 6) and desc.x.strides == [120, 1, 24, 4]


@needs_library
def test_a_pooling_cudnn_shapes_differently_is_refused_with_both_shapes():
    key = legacy.pooling_key(0, "float", legacy.POOL_MAX, (1, 1, 5, 5), (1, 1, 3, 3), (2, 2),
                             (0, 0), (2, 2), False)
    with pytest.raises(legacy.CudnnLibraryError, match=r"cuDNN pools .* to \(1, 1, 2, 2\), "
                                                       r"nnabla to \(1, 1, 3, 3\)"):
        legacy.PoolingDescriptor(key)


@needs_library
def test_descriptors_are_built_once_per_key_over_a_thousand_mixed_calls():
    legacy.clear()
    before = dict(legacy.COUNTS)
    rng = np.random.RandomState(0)
    shapes = [(1, 2, 4, 4), (2, 2, 6, 4), (1, 3, 4, 6)]
    with nn.context_scope(get_extension_context("cudnn")), nn.auto_forward():
        for i in range(1000):
            x = nn.Variable.from_numpy_array(rng.randn(*shapes[i % 3]))
            F.softmax(F.max_pooling(x, (2, 2)), axis=1)
    # 3 pooling + 3 softmax keys; every later pooling instance finds its descriptor (the
    # engine reuses the stateless softmax instances themselves)
    assert legacy.COUNTS["descriptors"] - before["descriptors"] == 6
    assert legacy.COUNTS["hits"] - before["hits"] == 1000 - 3
    assert legacy.COUNTS["handles"] == before["handles"]       # none without a device


def test_without_libcudnn_the_emulation_runs_the_cuda_computation(monkeypatch):
    monkeypatch.setattr(legacy, "_lib", [])
    monkeypatch.setattr(legacy, "_candidates", lambda: iter(["/nonexistent/libcudnn.so.9"]))
    ok, reason = legacy.available()
    assert not ok and "pip install nvidia-cudnn-cu13" in reason
    x = np.random.RandomState(1).randn(2, 3, 4, 4).astype(np.float32)
    with nn.context_scope(get_extension_context("cudnn")), nn.auto_forward():
        y = F.max_pooling(nn.Variable.from_numpy_array(x), (2, 2))
    np.testing.assert_array_equal(y.d, x.reshape(2, 3, 2, 2, 2, 2).max(axis=(3, 5)))


def test_softmax_keys_view_the_axis_as_cudnn_channels():
    key = legacy.softmax_key(0, "half", legacy.SOFTMAX_LOG, (2, 3, 4, 5), 2)
    assert (key.outer, key.size, key.inner, key.dtype) == (6, 4, 5, "half")


@needs_frontend
@pytest.mark.parametrize("mode", norm_graphs.MODES)
def test_the_frontend_builds_batch_norm_graphs_device_less(mode):
    import cudnn
    d = norm_graphs.descriptor(0, "float", mode, (4, 6, 5, 3), 1)
    assert (d.batch, d.channels, d.rest) == (4, 6, 15)
    graph, t = norm_graphs.build_graph(cudnn, d)
    out = t["dx"] if mode == "backward" else t["y"]
    assert out.get_dim() == [4, 6, 15, 1]
    if mode == "train":
        assert t["next_mean"].get_dim() == [1, 6, 1, 1] == t["inv_var"].get_dim()
    if mode == "backward":
        assert t["dscale"].get_dim() == [1, 6, 1, 1]


@needs_frontend
def test_batch_norm_graphs_are_cached_per_descriptor():
    norm_graphs.clear()
    before = dict(norm_graphs.COUNTS)
    rng = np.random.RandomState(2)
    with nn.context_scope(get_extension_context("cudnn")), nn.auto_forward():
        for i in range(30):
            x = nn.Variable.from_numpy_array(rng.randn(*((2, 3, 4) if i % 2 else (3, 3, 2))))
            beta, gamma = (nn.Variable.from_numpy_array(np.ones((1, 3, 1))) for _ in "bg")
            mean = nn.Variable.from_numpy_array(np.zeros((1, 3, 1)))
            var = nn.Variable.from_numpy_array(np.ones((1, 3, 1)))
            F.batch_normalization(x, beta, gamma, mean, var, batch_stat=bool(i % 3))
    built = norm_graphs.COUNTS["graphs"] - before["graphs"]
    assert built == norm_graphs.cache_size() == 4         # 2 shapes x (train, infer)
    assert norm_graphs.COUNTS["hits"] - before["hits"] == 30 - built
    assert norm_graphs.COUNTS["finalized"] == before["finalized"]


class _FakeGraph:
    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def record(*args):
            self.calls.append((name, args))
            if name == "check_support":
                raise RuntimeError("no plan")
        return record


@needs_frontend
def test_batch_norm_finalize_names_the_workspace_limit_when_nothing_fits():
    import cudnn
    d = norm_graphs.descriptor(0, "float", "train", (2, 3, 4, 4), 1)
    g = _FakeGraph()
    with pytest.raises(RuntimeError, match="NNABLA_CUDNN_WORKSPACE_LIMIT=0"):
        norm_graphs.finalize(cudnn, g, d, config.Settings(workspace_limit=0))
    assert ("deselect_workspace_greater_than", (0,)) in g.calls


def test_a_training_step_on_cudnn_matches_the_cpu():
    rng = np.random.RandomState(3)
    x = rng.randn(4, 3, 6, 6)
    beta, gamma = rng.randn(1, 3, 1, 1), rng.rand(1, 3, 1, 1) + 0.5
    results = []
    for name in ("cpu", "cudnn"):
        with nn.context_scope(get_extension_context(name)):
            xv = nn.Variable.from_numpy_array(x, need_grad=True)
            bv = nn.Variable.from_numpy_array(beta, need_grad=True)
            gv = nn.Variable.from_numpy_array(gamma, need_grad=True)
            mean = nn.Variable.from_numpy_array(np.zeros((1, 3, 1, 1)))
            var = nn.Variable.from_numpy_array(np.ones((1, 3, 1, 1)))
            h = F.batch_normalization(xv, bv, gv, mean, var, batch_stat=True)
            h = F.average_pooling(F.max_pooling(h, (2, 2)), (3, 3), including_pad=False)
            y = F.sum(F.log_softmax(F.softmax(F.sum_pooling(h, (1, 1)), axis=1), axis=1))
            set_strict_fallback(name != "cpu")
            try:
                y.forward()
                y.backward(clear_buffer=True)
            finally:
                set_strict_fallback(False)
            results.append([y.d.copy(), xv.g.copy(), bv.g.copy(), gv.g.copy(),
                            mean.d.copy(), var.d.copy()])
    for a, c in zip(*results):
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)
