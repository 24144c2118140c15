"""cuDNN frontend graphs for batch normalization, built once per descriptor and cached.

A batch normalization over one axis is a cuDNN batch norm of the (N, C, rest, 1) view of
its input: N the axes before the normalized one, C that axis, rest the axes after it. Three
graphs serve nnabla's BatchNormalization: ``train`` (batch statistics, the running
statistics updated with momentum ``1 - decay_rate``; the saved mean and inverse standard
deviation kept for backward), ``infer`` (running statistics as constants) and ``backward``
(the data, scale and bias gradients of ``train``).

Without a device (the emulation) graphs are constructed only (the frontend infers their
shapes without a driver; validation loads the driver), so the descriptors and the cache run
everywhere; finalizing and executing need a GPU.
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from . import config

MODES = ("train", "infer", "backward")
COUNTS = {"graphs": 0, "finalized": 0, "hits": 0}   # tests read these


@dataclass(frozen=True)
class BatchNormDescriptor:
    """One batch normalization as cuDNN sees it (a key of the graph cache)."""

    device: int
    dtype: str          # 'float' or 'half' (what cuDNN reads and writes x and y in)
    mode: str           # 'train', 'infer' or 'backward'
    batch: int
    channels: int
    rest: int

    def x_layout(self):
        return [self.batch, self.channels, self.rest, 1], [self.channels * self.rest,
                                                           self.rest, 1, 1]

    def stat_layout(self):
        return [1, self.channels, 1, 1], [self.channels, 1, 1, 1]


def descriptor(device, dtype, mode, shape, axis):
    """The :class:`BatchNormDescriptor` of normalizing ``shape`` over all axes but ``axis``."""
    if mode not in MODES:
        raise ValueError(f"cudnn batch-norm descriptor: argument 'mode' is {mode!r}; "
                         f"expected one of {MODES}")
    return BatchNormDescriptor(int(device), dtype, mode, math.prod(shape[:axis]),
                               int(shape[axis]), math.prod(shape[axis + 1:]))


class NormPlan:
    """A built graph and its tensors by role, ready to execute once finalized."""

    def __init__(self, desc, graph, tensors):
        self.desc, self.graph, self.tensors = desc, graph, tensors
        self.finalized, self.workspace_size = False, 0


def build_graph(cudnn, desc, handle=None):
    """The frontend graph of ``desc`` (not yet validated) and its tensors by role."""
    f32 = cudnn.data_type.FLOAT
    io = cudnn.data_type.HALF if desc.dtype == "half" else f32
    kw = dict(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32)
    graph = cudnn.pygraph(handle=handle, **kw) if handle is not None else cudnn.pygraph(**kw)
    xd, xs = desc.x_layout()
    sd, ss = desc.stat_layout()

    def stat(name):
        return graph.tensor(name=name, dim=sd, stride=ss, data_type=f32)

    def scalar(name):
        return graph.tensor(name=name, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=f32,
                            is_pass_by_value=True)

    t = {"x": graph.tensor(name="x", dim=xd, stride=xs, data_type=io)}
    if desc.mode == "train":
        t.update(scale=stat("scale"), bias=stat("bias"), running_mean=stat("running_mean"),
                 running_var=stat("running_var"), eps=scalar("eps"), momentum=scalar("momentum"))
        y, mean, inv_var, next_mean, next_var = graph.batchnorm(
            input=t["x"], scale=t["scale"], bias=t["bias"], in_running_mean=t["running_mean"],
            in_running_var=t["running_var"], epsilon=t["eps"], momentum=t["momentum"],
            peer_stats=[])
        t.update(y=y, mean=mean, inv_var=inv_var, next_mean=next_mean, next_var=next_var)
        for role in ("mean", "inv_var", "next_mean", "next_var"):
            t[role].set_output(True).set_data_type(f32)
    elif desc.mode == "infer":
        t.update(mean=stat("mean"), inv_var=stat("inv_var"), scale=stat("scale"),
                 bias=stat("bias"))
        t["y"] = graph.batchnorm_inference(input=t["x"], mean=t["mean"],
                                           inv_variance=t["inv_var"], scale=t["scale"],
                                           bias=t["bias"])
    else:
        t.update(dy=graph.tensor(name="dy", dim=xd, stride=xs, data_type=io),
                 scale=stat("scale"), mean=stat("mean"), inv_var=stat("inv_var"))
        dx, dscale, dbias = graph.batchnorm_backward(
            grad=t["dy"], input=t["x"], scale=t["scale"], mean=t["mean"],
            inv_variance=t["inv_var"], peer_stats=[])
        t.update(dx=dx, dscale=dscale, dbias=dbias)
        dx.set_output(True).set_data_type(io).set_stride(xs)
        for role in ("dscale", "dbias"):
            t[role].set_output(True).set_data_type(f32)
    if desc.mode != "backward":
        t["y"].set_output(True).set_data_type(io).set_stride(xs)
    COUNTS["graphs"] += 1
    return graph, t


def finalize(cudnn, graph, desc, settings):
    """Validate ``graph`` and build its plan by heuristics; needs a device."""
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    if settings.workspace_limit >= 0:
        graph.deselect_workspace_greater_than(settings.workspace_limit)
    try:
        graph.check_support()
        graph.build_plans(cudnn.build_plan_policy.HEURISTICS_CHOICE)
    except Exception as e:  # noqa: BLE001 - the frontend raises its own error types
        raise RuntimeError(f"cuDNN found no batch-normalization plan for {desc} within "
                           f"{config.WORKSPACE_LIMIT}={settings.workspace_limit} "
                           f"({type(e).__name__}: {e})") from None
    COUNTS["finalized"] += 1


_plans = {}
_lock = threading.Lock()


def plan(cudnn, desc, executes):
    """The cached :class:`NormPlan` of ``desc``, finalized at its first request when
    ``executes`` (a device is present)."""
    found = _plans.get(desc)
    if found is not None:
        COUNTS["hits"] += 1
        return found
    from .graphs import handle
    h = handle(cudnn, desc.device) if executes else None
    graph, tensors = build_graph(cudnn, desc, h)
    built = NormPlan(desc, graph, tensors)
    if executes:
        finalize(cudnn, graph, desc, config.settings())
        built.workspace_size = int(graph.get_workspace_size())
        built.finalized = True
    with _lock:
        return _plans.setdefault(desc, built)


def cache_size():
    return len(_plans)


def clear():
    """Forget every graph (handles are kept)."""
    with _lock:
        _plans.clear()
