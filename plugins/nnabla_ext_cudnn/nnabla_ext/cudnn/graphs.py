"""cuDNN frontend graphs for convolutions, built once per full descriptor and cached.

A :class:`ConvDescriptor` holds everything a plan depends on (device, data type, mode,
batch, channels, group, layout, sizes, kernel, pad, stride, dilation), as nnabla keys its
algorithm cache. :func:`plan` builds the graph for a descriptor the first time it is asked
for (under a lock), picks its execution plan (heuristics, or every candidate timed when
``NNABLA_CUDNN_ALGORITHM_BY_HEURISTIC=0``; within the workspace limit and the determinism
and TF32 settings of :mod:`.config`) and reuses it afterwards. cuDNN handles are created
lazily, one per device.

Without a device (the emulation), :func:`plan` constructs the graph description only (the
frontend infers its shapes without a driver), so descriptors, layouts and the cache are
exercised everywhere; execution needs a GPU.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

from . import config

MODES = ("fprop", "dgrad", "wgrad")
COUNTS = {"graphs": 0, "finalized": 0, "hits": 0, "handles": 0}   # tests read these


@dataclass(frozen=True)
class ConvDescriptor:
    """One convolution as cuDNN sees it (a key of the plan cache).

    Spatial tuples have 2 or 3 entries (a 1-D convolution is a 2-D one of width 1).
    """

    device: int
    dtype: str                  # 'float' or 'half' (what cuDNN reads and writes)
    mode: str                   # 'fprop', 'dgrad' or 'wgrad'
    batch: int
    channels: int
    out_channels: int
    group: int
    channel_last: bool
    in_size: tuple
    out_size: tuple
    kernel: tuple
    pad: tuple
    stride: tuple
    dilation: tuple

    def _layout(self, n, c, size):
        dims = [n, c, *size]
        if self.channel_last:          # memory (N, *size, C), dims stay (N, C, *size)
            strides = [c * math.prod(size), 1] + [
                c * math.prod(size[i + 1:]) for i in range(len(size))]
        else:
            strides = [c * math.prod(size)] + [math.prod(size[i:]) for i in range(len(size))] + [1]
        return dims, strides

    def x_layout(self):
        return self._layout(self.batch, self.channels, self.in_size)

    def y_layout(self):
        return self._layout(self.batch, self.out_channels, self.out_size)

    def w_layout(self):
        return self._layout(self.out_channels, self.channels // self.group, self.kernel)


def descriptor(device, dtype, mode, x_shape, w_shape, y_shape, base_axis, group, channel_last,
               pad, stride, dilation):
    """The :class:`ConvDescriptor` of an nnabla convolution's shapes and arguments."""
    if mode not in MODES:
        raise ValueError(f"cudnn descriptor: argument 'mode' is {mode!r}; expected one of "
                         f"{MODES}")
    n = len(pad)
    batch = math.prod(x_shape[:base_axis])
    if channel_last:
        in_size, channels = tuple(x_shape[base_axis:base_axis + n]), x_shape[-1]
        out_size, kernel = tuple(y_shape[base_axis:base_axis + n]), tuple(w_shape[1:1 + n])
    else:
        in_size, channels = tuple(x_shape[base_axis + 1:]), x_shape[base_axis]
        out_size, kernel = tuple(y_shape[base_axis + 1:]), tuple(w_shape[2:])
    pad, stride, dilation = tuple(pad), tuple(stride), tuple(dilation)
    if n == 1:                            # cuDNN needs two spatial axes: add a width of 1
        in_size, out_size, kernel = in_size + (1,), out_size + (1,), kernel + (1,)
        pad, stride, dilation = pad + (0,), stride + (1,), dilation + (1,)
    return ConvDescriptor(int(device), dtype, mode, int(batch), int(channels),
                          int(w_shape[0]), int(group), bool(channel_last), in_size, out_size,
                          kernel, pad, stride, dilation)


class ConvPlan:
    """A built graph and its tensors (``x``, ``w``, ``y`` by role), ready to execute."""

    def __init__(self, desc, graph, tensors, finalized, workspace_size=0):
        self.desc, self.graph, self.tensors = desc, graph, tensors
        self.finalized, self.workspace_size = finalized, workspace_size


def _data_type(cudnn, dtype):
    return cudnn.data_type.HALF if dtype == "half" else cudnn.data_type.FLOAT


def build_graph(cudnn, desc, handle=None):
    """The frontend graph of ``desc`` (not yet validated) and its tensors by role."""
    io = _data_type(cudnn, desc.dtype)
    f32 = cudnn.data_type.FLOAT
    kw = dict(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32)
    graph = cudnn.pygraph(handle=handle, **kw) if handle is not None else cudnn.pygraph(**kw)
    (xd, xs), (wd, ws), (yd, ys) = desc.x_layout(), desc.w_layout(), desc.y_layout()
    conv = dict(padding=list(desc.pad), stride=list(desc.stride),
                dilation=list(desc.dilation), compute_data_type=f32)
    if desc.mode == "fprop":
        x = graph.tensor(name="x", dim=xd, stride=xs, data_type=io)
        w = graph.tensor(name="w", dim=wd, stride=ws, data_type=io)
        y = graph.conv_fprop(image=x, weight=w, **conv)
        y.set_output(True).set_data_type(io).set_stride(ys)
    elif desc.mode == "dgrad":
        y = graph.tensor(name="y", dim=yd, stride=ys, data_type=io)
        w = graph.tensor(name="w", dim=wd, stride=ws, data_type=io)
        x = graph.conv_dgrad(loss=y, filter=w, **conv)
        x.set_output(True).set_data_type(io).set_dim(xd).set_stride(xs)
    else:
        x = graph.tensor(name="x", dim=xd, stride=xs, data_type=io)
        y = graph.tensor(name="y", dim=yd, stride=ys, data_type=io)
        w = graph.conv_wgrad(image=x, loss=y, **conv)
        w.set_output(True).set_data_type(io).set_dim(wd).set_stride(ws)
    COUNTS["graphs"] += 1
    return graph, {"x": x, "w": w, "y": y}


def finalize(cudnn, graph, desc, settings):
    """Validate ``graph`` and pick its execution plan under ``settings``; needs a device."""
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    if settings.deterministic:
        graph.deselect_numeric_notes([cudnn.numerical_note.NONDETERMINISTIC])
    if not settings.allow_tf32 and desc.dtype == "float":
        graph.deselect_numeric_notes([cudnn.numerical_note.TENSOR_CORE,
                                      cudnn.numerical_note.DOWN_CONVERT_INPUTS])
    if settings.workspace_limit >= 0:
        graph.deselect_workspace_greater_than(settings.workspace_limit)
    from . import BLACKLISTS
    if BLACKLISTS[desc.mode]:
        graph.deselect_engines([f"eng{i}" for i in sorted(BLACKLISTS[desc.mode])])
    try:
        graph.check_support()
        policy = (cudnn.build_plan_policy.HEURISTICS_CHOICE if settings.by_heuristic
                  else cudnn.build_plan_policy.ALL)
        graph.build_plans(policy)
    except Exception as e:  # noqa: BLE001 - the frontend raises its own error types
        raise RuntimeError(
            f"cuDNN found no convolution plan for {desc} within {config.WORKSPACE_LIMIT}="
            f"{settings.workspace_limit} and {config.DETERMINISTIC}="
            f"{int(settings.deterministic)} ({type(e).__name__}: {e}); raise the workspace "
            "limit or allow non-deterministic algorithms") from None
    COUNTS["finalized"] += 1


_plans = {}
_handles = {}
_lock = threading.Lock()


def handle(cudnn, device):
    """The cuDNN handle of ``device``, created at its first use."""
    with _lock:
        if device not in _handles:
            _handles[device] = cudnn.create_handle()
            COUNTS["handles"] += 1
        return _handles[device]


def plan(cudnn, desc, executes, tune=None):
    """The cached :class:`ConvPlan` of ``desc``; built (and, when ``executes``, finalized
    and, without the heuristic choice, tuned by ``tune(plan)``) at the first request."""
    found = _plans.get(desc)
    if found is not None:
        COUNTS["hits"] += 1
        return found
    with _lock:
        found = _plans.get(desc)
        if found is not None:
            COUNTS["hits"] += 1
            return found
    h = handle(cudnn, desc.device) if executes else None
    graph, tensors = build_graph(cudnn, desc, h)
    built = ConvPlan(desc, graph, tensors, False)
    if executes:
        settings = config.settings()
        finalize(cudnn, graph, desc, settings)
        if not settings.by_heuristic and tune is not None:
            tune(built)
        built.workspace_size = int(graph.get_workspace_size())
        built.finalized = True
    with _lock:
        return _plans.setdefault(desc, built)


def fastest_plan(graph, run, repeat=3):
    """Select, among ``graph``'s built plans, the one ``run(index)`` times fastest."""
    best, best_time = None, float("inf")
    for index in range(graph.get_execution_plan_count()):
        try:
            run(index)
            start = time.perf_counter()
            for _ in range(repeat):
                run(index)
            elapsed = time.perf_counter() - start
        except Exception:  # noqa: BLE001 - a plan that fails to run is not a candidate
            continue
        if elapsed < best_time:
            best, best_time = index, elapsed
    if best is not None:
        graph.select_plan(best)
    return best


def cache_size():
    return len(_plans)


def clear():
    """Forget every plan (handles are kept)."""
    with _lock:
        _plans.clear()
