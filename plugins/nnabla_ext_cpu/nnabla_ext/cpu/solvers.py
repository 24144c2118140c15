"""Solver update rules, written once against an array namespace ``xp``.

Every update rule is ``rule(xp, p, g, state, t, hp) -> None``, as
:mod:`nnabla.solver_rule` specifies.

Scalar factors that nnabla computes in double precision (powers of the betas) are
computed with Python floats and rounded to float32 where nnabla rounds them.

``RULES`` maps nnabla's solver type name to a :class:`nnabla.solver_rule.Rule` (the
contract is documented there); every function here is written against ``xp``, so
another backend may register them with its own namespace.

The CPU rules of every solver but Lars, Lamb and AdaBelief (whose steps need norms or
branch per step) run as one fused native pass per parameter (``_native.solver_update``,
src/solvers.cpp) when ``xp`` is numpy and every array is a C-contiguous float32 ndarray;
the native loops make the float32 operations of the functions below in their order, so
the results are bit-identical. In every other case (another namespace, dtype or layout) the function
below runs. :data:`NATIVE_UPDATES` switches the native passes off.
"""
from __future__ import annotations

import math
import numpy as np

from nnabla.solver_rule import GradOps
from nnabla.solver_rule import Rule as _Rule

from . import _native

NATIVE_UPDATES = True
"""Whether the rules with a fused native update use it (False: always the ``xp`` code)."""


def weight_decay(xp, p, g, rate):
    """Add ``rate * p`` to the gradient ``g`` in place (non-fused weight decay); one native
    pass for float32 numpy arrays (the same float32 operations, see src/solvers.cpp)."""
    rate = xp.float32(rate)
    if NATIVE_UPDATES and xp is np and _native.solver_update("AddScaled", g, p, (), (rate,)):
        return
    g += p * rate                   # array first: numpy skips its scalar-operator path


def clip_grad_by_norm(xp, g, clip_norm):
    """Rescale ``g`` in place to L2 norm ``clip_norm`` when its norm is larger."""
    clip_norm = xp.float32(clip_norm)
    sum_sq = xp.sum(g * g, dtype=xp.float32)
    if sum_sq > 0 and sum_sq > clip_norm * clip_norm:  # sum_sq > 0: no sqrt of zero
        g[...] = clip_norm * g / xp.sqrt(sum_sq)


def scale_grad(xp, g, scale):
    """Multiply ``g`` in place by ``scale``."""
    g[...] = g * xp.float32(scale)


def has_inf(xp, g):
    """Return True if ``g`` holds an infinity."""
    return bool(xp.isinf(g).any())


def has_nan(xp, g):
    """Return True if ``g`` holds a NaN."""
    return bool(xp.isnan(g).any())


def has_inf_or_nan(xp, g):
    """Return True if ``g`` holds an infinity or a NaN."""
    return not bool(xp.isfinite(g).all())


GRAD_OPS = GradOps(weight_decay, clip_grad_by_norm, scale_grad, has_inf, has_nan,
                   has_inf_or_nan)


def Rule(update, states=(), optional_states=()):  # noqa: N802 - reads as the core's Rule
    """The core's :class:`nnabla.solver_rule.Rule` with this module's gradient helpers."""
    return _Rule(update, states, optional_states, GRAD_OPS)


def _f32(x):
    return np.float32(x)


def sgd(xp, p, g, state, t, hp):
    """p -= lr * g."""
    p -= g * hp["lr"]


def momentum(xp, p, g, state, t, hp):
    """m = momentum * m + lr * g; p -= m (the buffer holds the learning rate)."""
    m = state["m"]
    m[...] = hp["momentum"] * m + hp["lr"] * g
    p[...] = p - m


def nesterov(xp, p, g, state, t, hp):
    """m' = momentum * m - lr * g; p += -momentum * m + (1 + momentum) * m'."""
    m, mom = state["m"], hp["momentum"]
    m_prev = m.copy()
    m[...] = mom * m - hp["lr"] * g
    p[...] = p + (-mom * m_prev + (1 + mom) * m)


def sgdw(xp, p, g, state, t, hp):
    """Momentum SGD with decoupled decay ``wd * (lr / init_lr) * p``."""
    m, lr = state["m"], hp["lr"]
    decay = (lr / hp["init_lr"]) * hp["weight_decay_rate"]
    m[...] = hp["momentum"] * m + lr * g
    p[...] = p - m - decay * p


def lars(xp, p, g, state, t, hp):
    """Momentum SGD with the layer-wise rate ``lr * coefficient * |p| / (|g| + wd |p|)``."""
    wd, eps = hp["weight_decay_rate"], hp["eps"]
    g_norm = xp.sqrt(xp.sum(g * g, dtype=xp.float32))
    d_norm = xp.sqrt(xp.sum(p * p, dtype=xp.float32))
    x = g_norm + wd * d_norm
    if not x >= 0:
        raise ValueError(f"Lars: local learning rate should be positive or zero; got {x}")
    if x < eps:
        x = x + eps
    lr = hp["lr"] if d_norm < eps else hp["lr"] * hp["coefficient"] * d_norm / x
    g[...] = g + wd * p  # fused decay writes into the gradient, as nnabla does
    v = state["v"]
    v[...] = hp["momentum"] * v + _f32(lr) * g
    p[...] = p - v


def adadelta(xp, p, g, state, t, hp):
    """Adadelta: delta = sqrt((E[dx^2] + eps) / (E[g^2] + eps)) * g; p -= lr * delta."""
    e_g, e_d, decay, eps = state["e_sqr_grad"], state["e_sqr_delta"], hp["decay"], hp["eps"]
    e_g[...] = e_g * decay + g * g * (1 - decay)
    delta = xp.sqrt((e_d + eps) / (e_g + eps)) * g
    e_d[...] = e_d * decay + delta * delta * (1 - decay)
    p[...] = p - hp["lr"] * delta


def adagrad(xp, p, g, state, t, hp):
    """v += g^2; p -= lr * g / (sqrt(v) + eps)."""
    v = state["v"]
    v[...] = v + g * g
    p[...] = p - hp["lr"] * g / (xp.sqrt(v) + hp["eps"])


def rmsprop(xp, p, g, state, t, hp):
    """v = decay * v + (1 - decay) * g^2; p -= lr / (sqrt(v) + eps) * g."""
    v, decay = state["v"], hp["decay"]
    v[...] = v * decay + g * g * (1 - decay)
    p[...] = p - hp["lr"] / (xp.sqrt(v) + hp["eps"]) * g


def rmsprop_graves(xp, p, g, state, t, hp):
    """Graves' RMSprop: d = momentum * d - lr * g / sqrt(n - gbar^2 + eps); p += d."""
    n, gbar, d, decay = state["n"], state["g"], state["d"], hp["decay"]
    n[...] = decay * n + (1 - decay) * g * g
    gbar[...] = decay * gbar + (1 - decay) * g
    d[...] = hp["momentum"] * d - hp["lr"] * g / xp.sqrt(n - gbar * gbar + hp["eps"])
    p[...] = p + d


def _adam_alpha_t(hp, t, lr_name="alpha"):
    """alpha * sqrt(1 - beta2^t) / (1 - beta1^t): Adam's bias correction folded into alpha."""
    b1, b2 = float(hp["beta1"]), float(hp["beta2"])
    return hp[lr_name] * _f32(math.sqrt(1 - b2**t) / (1 - b1**t))


def _moments(p, g, m, v, hp):
    # In place, in the same operation order as b1*m + (1-b1)*g and b2*v + (1-b2)*g*g,
    # so the float32 results are identical with two fewer full-size temporaries.
    tmp = (1 - hp["beta1"]) * g
    m *= hp["beta1"]
    m += tmp
    tmp = (1 - hp["beta2"]) * g
    tmp *= g
    v *= hp["beta2"]
    v += tmp


def adam(xp, p, g, state, t, hp):
    """Adam, eps added to the uncorrected sqrt(v): p -= alpha_t * m / (sqrt(v) + eps)."""
    m, v = state["mean"], state["var"]
    _moments(p, g, m, v, hp)
    step = _adam_alpha_t(hp, t) * m
    denom = xp.sqrt(v)
    denom += hp["eps"]
    step /= denom
    p -= step


def adamw(xp, p, g, state, t, hp):
    """Adam with decoupled decay ``wd * (alpha / init_alpha) * p``."""
    m, v = state["mean"], state["var"]
    eta_t = hp["alpha"] / hp["init_lr"]
    _moments(p, g, m, v, hp)
    step = _adam_alpha_t(hp, t) * m / (xp.sqrt(v) + hp["eps"])
    p[...] = p - step - eta_t * hp["weight_decay_rate"] * p


def adamax(xp, p, g, state, t, hp):
    """u = max(beta2 * u, |g|); p -= alpha / (1 - beta1^t) * m / (u + eps)."""
    m, u = state["m"], state["u"]
    m[...] = hp["beta1"] * m + (1 - hp["beta1"]) * g
    u[...] = xp.maximum(hp["beta2"] * u, xp.abs(g))
    alpha_t = hp["alpha"] * _f32(1 / (1 - float(hp["beta1"]) ** t))
    p[...] = p - alpha_t * m / (u + hp["eps"])


def amsgrad(xp, p, g, state, t, hp):
    """Adam on the running maximum v_hat of v; bias correction only if asked."""
    m, v, v_hat = state["m"], state["v"], state["v_hat"]
    _moments(p, g, m, v, hp)
    v_hat[...] = xp.maximum(v_hat, v)
    alpha_t = _adam_alpha_t(hp, t) if hp["bias_correction"] else hp["alpha"]
    p[...] = p - alpha_t * m / (xp.sqrt(v_hat) + hp["eps"])


def _bounded_step(xp, p, m, v_like, alpha_t, lower, upper, eps):
    eta = xp.minimum(upper, xp.maximum(alpha_t / (xp.sqrt(v_like) + eps), lower))
    p[...] = p - eta * m


def _adabound_factors(hp, t):
    """(alpha_t, lower, upper) of AdaBound's step ``t``."""
    final_lr = hp["final_lr"] * (hp["alpha"] / hp["init_lr"])
    gamma_t = hp["gamma"] * _f32(t)
    lower = final_lr * (1 - 1 / (gamma_t + 1))
    upper = final_lr * (1 + 1 / gamma_t)
    return _adam_alpha_t(hp, t), lower, upper


def adabound(xp, p, g, state, t, hp):
    """Adam with the step size clipped to [lower(t), upper(t)] around final_lr."""
    m, v = state["mean"], state["var"]
    _moments(p, g, m, v, hp)
    alpha_t, lower, upper = _adabound_factors(hp, t)
    _bounded_step(xp, p, m, v, alpha_t, lower, upper, hp["eps"])


def _amsbound_factors(hp, t):
    """(alpha_t, lower, upper) of AMSBound's step ``t``.

    The upper bound is ``final_lr * (1 + t / gamma)``, as nnabla computes it (its
    AdaBound uses ``1 + 1 / (gamma * t)``); kept for identical numbers.
    """
    alpha_t = _adam_alpha_t(hp, t) if hp["bias_correction"] else hp["alpha"]
    final_lr = hp["final_lr"] * (hp["alpha"] / hp["init_lr"])
    lower = final_lr * (1 - 1 / (hp["gamma"] * _f32(t) + 1))
    upper = final_lr * (1 + 1 / hp["gamma"] * _f32(t))
    return alpha_t, lower, upper


def amsbound(xp, p, g, state, t, hp):
    """AMSGRAD with AdaBound's clipping (bounds: :func:`_amsbound_factors`)."""
    m, v, v_hat = state["m"], state["v"], state["v_hat"]
    _moments(p, g, m, v, hp)
    v_hat[...] = xp.maximum(v_hat, v)
    alpha_t, lower, upper = _amsbound_factors(hp, t)
    _bounded_step(xp, p, m, v_hat, alpha_t, lower, upper, hp["eps"])


def _adabelief_factors(hp, t):
    """Return (alpha_t, sqrt(1 - beta2^t), sgd_update) of AdaBelief's step ``t``."""
    b1, b2 = float(hp["beta1"]), float(hp["beta2"])
    beta2_t = float(_f32(b2**t))
    correction1 = float(_f32(1 - float(_f32(b1**t))))
    correction2 = _f32(math.sqrt(1 - beta2_t))
    if not hp["rectify"]:
        return hp["alpha"] / _f32(correction1), correction2, False
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * beta2_t / (1 - beta2_t)
    if rho_t <= 4:
        return hp["alpha"], correction2, True
    r_t = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    return hp["alpha"] * _f32(r_t) / _f32(correction1), correction2, False


def adabelief(xp, p, g, state, t, hp):
    """AdaBelief: Adam on the variance of (g - m); optional AMSGrad, decoupled decay, RAdam.

    As in nnabla, eps is added into the stored ``var`` (or ``s_max``) at every step.
    """
    m, s, eps = state["mean"], state["var"], hp["eps"]
    m[...] = hp["beta1"] * m + (1 - hp["beta1"]) * g
    s[...] = hp["beta2"] * s + (1 - hp["beta2"]) * (g - m) ** 2
    if hp["weight_decouple"]:
        wd = hp["weight_decay_rate"]
        p[...] = p - p * (wd if hp["fixed_decay"] else wd * hp["alpha"])
    if hp["amsgrad"]:
        s_t = state["s_max"]
        s_t[...] = xp.maximum(s_t, s)
    else:
        s_t = s
    s_t[...] = s_t + eps
    alpha_t, correction2, sgd_update = _adabelief_factors(hp, t)
    if sgd_update:
        p[...] = p - alpha_t * m
    else:
        p[...] = p - alpha_t * m / (xp.sqrt(s_t) / correction2 + eps)


def lamb(xp, p, g, state, t, hp):
    """LAMB: r = m_hat / (sqrt(v_hat) + eps) + wd * p; p -= eta * clip(|p|) / |r| * r."""
    m, v, eps = state["mean"], state["var"], hp["eps"]
    _moments(p, g, m, v, hp)
    c1, c2 = np.float32(1), np.float32(1)
    if hp["bias_correction"]:
        c1 = _f32(1 - float(hp["beta1"]) ** t)
        c2 = _f32(1 - float(hp["beta2"]) ** t)
    r = (m / c1) / (xp.sqrt(v / c2) + eps) + hp["weight_decay_rate"] * p
    r_norm = xp.sqrt(xp.sum(r * r, dtype=xp.float32))
    p_norm = xp.sqrt(xp.sum(p * p, dtype=xp.float32))
    p_norm = min(max(p_norm, hp["gamma_l"]), hp["gamma_u"])
    local_lr = p_norm / r_norm if r_norm > eps else np.float32(1)
    p[...] = p - hp["eta"] * _f32(local_lr) * r


def lion(xp, p, g, state, t, hp):
    """Lion: p -= lr * (sign(lerp(g, m, beta1)) + wd * p); m = lerp(g, m, beta2)."""
    m = state["m"]
    u = xp.sign(g + hp["beta1"] * (m - g))
    m[...] = g + hp["beta2"] * (m - g)
    p[...] = p - hp["lr"] * (u + hp["weight_decay_rate"] * p)


def _sgd_scalars(hp, t):
    return (hp["lr"],)


def _momentum_scalars(hp, t):
    return hp["momentum"], hp["lr"]


def _nesterov_scalars(hp, t):
    mom = hp["momentum"]
    return mom, hp["lr"], -mom, 1 + mom


def _sgdw_scalars(hp, t):
    lr = hp["lr"]
    return hp["momentum"], lr, (lr / hp["init_lr"]) * hp["weight_decay_rate"]


def _adagrad_scalars(hp, t):
    return hp["lr"], hp["eps"]


def _rmsprop_scalars(hp, t):
    decay = hp["decay"]
    return decay, 1 - decay, hp["lr"], hp["eps"]


def _adam_scalars(hp, t):
    b1, b2 = hp["beta1"], hp["beta2"]
    return b1, 1 - b1, b2, 1 - b2, _adam_alpha_t(hp, t), hp["eps"]


def _adamw_scalars(hp, t):
    eta_t = hp["alpha"] / hp["init_lr"]
    return _adam_scalars(hp, t) + (eta_t * hp["weight_decay_rate"],)


def _adamax_scalars(hp, t):
    b1 = hp["beta1"]
    alpha_t = hp["alpha"] * _f32(1 / (1 - float(b1) ** t))
    return b1, 1 - b1, hp["beta2"], alpha_t, hp["eps"]


def _amsgrad_scalars(hp, t):
    b1, b2 = hp["beta1"], hp["beta2"]
    alpha_t = _adam_alpha_t(hp, t) if hp["bias_correction"] else hp["alpha"]
    return b1, 1 - b1, b2, 1 - b2, alpha_t, hp["eps"]


def _adadelta_scalars(hp, t):
    decay = hp["decay"]
    return decay, 1 - decay, hp["eps"], hp["lr"]


def _rmsprop_graves_scalars(hp, t):
    decay = hp["decay"]
    return decay, 1 - decay, hp["momentum"], hp["lr"], hp["eps"]


def _adabound_scalars(hp, t):
    b1, b2 = hp["beta1"], hp["beta2"]
    alpha_t, lower, upper = _adabound_factors(hp, t)
    return b1, 1 - b1, b2, 1 - b2, alpha_t, hp["eps"], lower, upper


def _amsbound_scalars(hp, t):
    b1, b2 = hp["beta1"], hp["beta2"]
    alpha_t, lower, upper = _amsbound_factors(hp, t)
    return b1, 1 - b1, b2, 1 - b2, alpha_t, hp["eps"], lower, upper


def _lion_scalars(hp, t):
    return hp["beta1"], hp["beta2"], hp["lr"], hp["weight_decay_rate"]


def _fused(name, update, states, scalars):
    """The Rule of solver ``name``: ``update``, or its fused native pass where it applies.

    ``scalars(hp, t)`` gives the float32 factors of the native loop of ``name``
    (src/solvers.cpp), computed by the same expressions as in ``update``; ``states`` are the
    state names in the loop's order. ``_native.solver_update`` checks the arrays and returns
    False, having done nothing, unless all are C-contiguous float32 ndarrays of one size, the
    written ones writable and no two overlapping; ``update`` then runs.
    """
    def fused(xp, p, g, state, t, hp):
        if NATIVE_UPDATES and xp is np and _native.solver_update(
                name, p, g, tuple([state[s] for s in states]) if states else (),
                scalars(hp, t)):
            return
        update(xp, p, g, state, t, hp)

    fused.__name__ = fused.__qualname__ = update.__name__ + "_fused"
    fused.__doc__ = update.__doc__
    return Rule(fused, states)


# The solvers with a fused native pass: name -> (xp update, state names in the native
# loop's order, float32 factors of the loop).
_FUSED = {
    "Sgd": (sgd, (), _sgd_scalars),
    "SgdW": (sgdw, ("m",), _sgdw_scalars),
    "Momentum": (momentum, ("m",), _momentum_scalars),
    "Nesterov": (nesterov, ("m",), _nesterov_scalars),
    "Adadelta": (adadelta, ("e_sqr_grad", "e_sqr_delta"), _adadelta_scalars),
    "Adagrad": (adagrad, ("v",), _adagrad_scalars),
    "RMSprop": (rmsprop, ("v",), _rmsprop_scalars),
    "RMSpropGraves": (rmsprop_graves, ("n", "g", "d"), _rmsprop_graves_scalars),
    "Adam": (adam, ("mean", "var"), _adam_scalars),
    "AdamW": (adamw, ("mean", "var"), _adamw_scalars),
    "AdaBound": (adabound, ("mean", "var"), _adabound_scalars),
    "Adamax": (adamax, ("m", "u"), _adamax_scalars),
    "AMSGRAD": (amsgrad, ("m", "v", "v_hat"), _amsgrad_scalars),
    "AMSBound": (amsbound, ("m", "v", "v_hat"), _amsbound_scalars),
    "Lion": (lion, ("m",), _lion_scalars),
}

RULES = {
    **{name: _fused(name, *entry) for name, entry in _FUSED.items()},
    "Lars": Rule(lars, ("v",)),
    "AdaBelief": Rule(adabelief, ("mean", "var"), (("s_max", "amsgrad"),)),
    "Lamb": Rule(lamb, ("mean", "var")),
}
"""The CPU backend's solver rules, keyed by nnabla's solver type name."""

GENERIC_UPDATES = {name: entry[0] for name, entry in _FUSED.items()}
"""The ``xp`` update behind each fused rule of :data:`RULES` (for another backend)."""
