"""The graph semantics every backend must keep, as checks the backend kit runs in a backend's
context and in the CPU's (:mod:`nnabla.testing.backend_kit` compares what they return).

``GRAPH_CHECKS`` maps a check's name to ``(functions it needs, check)``; ``check(ctx)``
raises ``AssertionError`` when a rule is broken within ``ctx`` and returns ``{what: array}``
for the comparison with the CPU. The graphs use only ``ReLU``, ``MulScalar`` and
``AddScalar`` (and ``BatchNormalization`` for running statistics), so a backend with a few
kernels can run them.
"""
from __future__ import annotations

import numpy as np

import nnabla as nn
import nnabla.functions as F

GRAPH_CHECKS = {}
_CHAIN = ("MulScalar", "ReLU", "AddScalar")


def _graph_check(name, *needs):
    def register(check):
        GRAPH_CHECKS[name] = (needs, check)
        return check
    return register


def _chain(ctx, recompute=False, clear=False, backwards=1):
    """``y = 0.5 relu(x) + 1`` in ``ctx``, forward and ``backwards`` backward calls;
    returns ``(x, y, dy, {"y": ..., "x.g": ...})``.

    ReLU's backward reads its output: with ``recompute`` that output is cleared in forward
    and recomputed (from the leaf ``x``) in backward.
    """
    rng = np.random.RandomState(3)
    with nn.context_scope(ctx):
        x = nn.Variable.from_numpy_array(rng.randn(2, 3, 4).astype(np.float32), need_grad=True)
        h = F.relu(x)
        h.recompute = recompute
        y = F.add_scalar(F.mul_scalar(h, 0.5), 1.0)
        dy = rng.randn(*y.shape).astype(np.float32)
        x.grad.zero()
        y.forward(clear_no_need_grad=clear)
        out = y.d.copy()
        for _ in range(backwards):
            y.backward(dy, clear_buffer=clear)
    return x, y, dy, {"y": out, "x.g": x.g.copy()}


def _require(condition, message):
    if not condition:
        raise AssertionError(message)


@_graph_check("leaf gradients accumulate", *_CHAIN)
def _accumulation(ctx):
    once, twice = _chain(ctx)[3], _chain(ctx, backwards=2)[3]
    _require(np.allclose(twice["x.g"], 2 * once["x.g"]),
             "a second backward did not add to the leaf gradient")
    return twice


@_graph_check("clear_buffer keeps results", *_CHAIN)
def _clear_buffer(ctx):
    plain, cleared = _chain(ctx)[3], _chain(ctx, clear=True)[3]
    _require(all(np.array_equal(plain[k], cleared[k]) for k in plain),
             "clear_no_need_grad/clear_buffer changed y or x.g")
    return cleared


@_graph_check("auto_forward equals static", *_CHAIN)
def _auto_forward(ctx):
    x, _, _, static = _chain(ctx)
    with nn.context_scope(ctx), nn.auto_forward():
        dynamic = F.add_scalar(F.mul_scalar(F.relu(x), 0.5), 1.0)
    _require(np.array_equal(dynamic.d, static["y"]), "auto_forward's output differs")
    return {"y": dynamic.d.copy()}


@_graph_check("nn.grad equals backward", *_CHAIN)
def _nn_grad(ctx):
    x, y, dy, by_backward = _chain(ctx)
    with nn.context_scope(ctx):
        (gx,) = nn.grad([y], [x], grad_outputs=[dy])
        gx.forward()
    _require(np.allclose(gx.d, by_backward["x.g"], rtol=1e-5, atol=1e-6),
             "nn.grad differs from backward")
    return {"nn.grad": gx.d.copy()}


@_graph_check("recompute", *_CHAIN)
def _recompute(ctx):
    stored, recomputed = _chain(ctx)[3], _chain(ctx, recompute=True, clear=True)[3]
    _require(np.array_equal(stored["x.g"], recomputed["x.g"]), "recompute changed x.g")
    return recomputed


@_graph_check("running statistics in place", "BatchNormalization")
def _running_statistics(ctx):
    rng = np.random.RandomState(5)
    with nn.context_scope(ctx):
        x = nn.Variable.from_numpy_array(rng.randn(4, 3, 2, 2).astype(np.float32) + 1.0)
        beta, mean = (nn.Variable.from_numpy_array(np.zeros((1, 3, 1, 1), np.float32))
                      for _ in range(2))
        gamma, var = (nn.Variable.from_numpy_array(np.ones((1, 3, 1, 1), np.float32))
                      for _ in range(2))
        y = F.batch_normalization(x, beta, gamma, mean, var, batch_stat=True)
        y.forward()
    _require(np.abs(mean.d).min() > 0, "the running mean did not change (read through .d)")
    return {"y": y.d.copy(), "running mean": mean.d.copy(), "running variance": var.d.copy()}
