"""The CUDA backend's solver rules: the CPU plugin's ``xp`` rules, run on CuPy arrays.

Every rule of :data:`nnabla_ext.cpu.solvers.RULES` is written against ``xp`` and runs on the
device as it is, except where it compares a device norm with a host scalar in Python
(``max(p_norm, gamma_l)``, ``if r_norm > eps``): each such comparison waits for the device.
:func:`lamb` and :func:`lars` here keep those choices on the device (``xp.where``), with the
same float32 arithmetic.
"""
from __future__ import annotations

import functools

import numpy as np
from nnabla.solver_rule import Rule
from nnabla_ext.cpu.solvers import GRAD_OPS
from nnabla_ext.cpu.solvers import RULES as _CPU_RULES

from ._namespace import call_on_device


def _moments(xp, g, m, v, hp):
    # the operation order of nnabla_ext.cpu.solvers: b1*m + (1-b1)*g, b2*v + (1-b2)*g*g
    m[...] = hp["beta1"] * m + (1 - hp["beta1"]) * g
    v[...] = hp["beta2"] * v + (1 - hp["beta2"]) * g * g


def _norm(xp, a):
    return xp.sqrt(xp.sum(a * a, dtype=xp.float32))


def lamb(xp, p, g, state, t, hp):
    """LAMB: r = m_hat / (sqrt(v_hat) + eps) + wd * p; p -= eta * clip(|p|) / |r| * r."""
    m, v, eps = state["mean"], state["var"], hp["eps"]
    _moments(xp, g, m, v, hp)
    c1, c2 = np.float32(1), np.float32(1)
    if hp["bias_correction"]:
        c1 = np.float32(1 - float(hp["beta1"]) ** t)
        c2 = np.float32(1 - float(hp["beta2"]) ** t)
    r = (m / c1) / (xp.sqrt(v / c2) + eps) + hp["weight_decay_rate"] * p
    r_norm = _norm(xp, r)
    p_norm = xp.minimum(xp.maximum(_norm(xp, p), hp["gamma_l"]), hp["gamma_u"])
    local_lr = xp.where(r_norm > eps, p_norm / xp.maximum(r_norm, eps), np.float32(1))
    p[...] = p - hp["eta"] * local_lr.astype(xp.float32) * r


def lars(xp, p, g, state, t, hp):
    """Momentum SGD with the layer-wise rate ``lr * coefficient * |p| / (|g| + wd |p|)``."""
    wd, eps = hp["weight_decay_rate"], hp["eps"]
    g_norm, d_norm = _norm(xp, g), _norm(xp, p)
    x = g_norm + wd * d_norm
    if not bool(x >= 0):       # NaN norms: nnabla raises (one device read per update)
        raise ValueError(f"Lars: local learning rate should be positive or zero; got {x}")
    x = xp.where(x < eps, x + eps, x)
    lr = xp.where(d_norm < eps, hp["lr"], hp["lr"] * hp["coefficient"] * d_norm / x)
    g[...] = g + wd * p        # fused decay writes into the gradient, as nnabla does
    v = state["v"]
    v[...] = hp["momentum"] * v + lr.astype(xp.float32) * g
    p[...] = p - v


def _on_device(function):
    """``function(xp, ...)`` run with ``xp``'s device current (the solver's context's)."""
    @functools.wraps(function)
    def run(xp, *args):
        return call_on_device(xp, function, xp, *args)
    return run


_DEVICE = {"Lamb": lamb, "Lars": lars}
DEVICE_GRAD_OPS = type(GRAD_OPS)(*(_on_device(op) for op in GRAD_OPS))
RULES = {name: Rule(_on_device(_DEVICE.get(name, r.update)), r.states, r.optional_states,
                    DEVICE_GRAD_OPS)
         for name, r in _CPU_RULES.items()}
