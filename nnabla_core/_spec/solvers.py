"""The solvers' interfaces: nnabla's argument names, order and defaults, per solver type.

Plain data, read by :mod:`nnabla.solvers` (the ``S.*`` functions) and by the NNP schema
(each solver's parameter message).
"""
from __future__ import annotations

from typing import NamedTuple


class SolverSpec(NamedTuple):
    """One solver's interface.

    Attributes:
        args: ``(name, default)`` pairs in nnabla's order.
        lr: the argument that :meth:`Solver.learning_rate` reads and sets.
        fused: True, False, or the name of the bool argument deciding whether weight
            decay is fused into the update.
        wd: the argument holding the default fused decay rate, or None (rate 0).
        doc: the update rule.
    """

    args: tuple
    lr: str = "lr"
    fused: object = False
    wd: object = None
    doc: str = ""


_ADAM_ARGS = (("alpha", 0.001), ("beta1", 0.9), ("beta2", 0.999), ("eps", 1e-08))
_BOUND_ARGS = (*_ADAM_ARGS, ("final_lr", 0.1), ("gamma", 0.001))

SPECS = {
    "Sgd": SolverSpec((("lr", 0.001),), doc="Stochastic gradient descent: p -= lr * g."),
    "Momentum": SolverSpec(
        (("lr", 0.001), ("momentum", 0.9)),
        doc="Momentum SGD; the buffer holds the learning rate: m = momentum * m + lr * g; "
            "p -= m."),
    "Nesterov": SolverSpec(
        (("lr", 0.001), ("momentum", 0.9)),
        doc="Nesterov accelerated gradient: v' = momentum * v - lr * g; "
            "p += -momentum * v + (1 + momentum) * v'."),
    "Adadelta": SolverSpec(
        (("lr", 1.0), ("decay", 0.95), ("eps", 1e-06)),
        doc="Adadelta: E[g^2] and E[dx^2] decay with ``decay``; "
            "dx = sqrt((E[dx^2] + eps) / (E[g^2] + eps)) * g; p -= lr * dx."),
    "Adagrad": SolverSpec(
        (("lr", 0.01), ("eps", 1e-08)),
        doc="Adagrad: v += g^2; p -= lr * g / (sqrt(v) + eps)."),
    "AdaBelief": SolverSpec(
        (*_ADAM_ARGS, ("wd", 0.0), ("amsgrad", False), ("weight_decouple", False),
         ("fixed_decay", False), ("rectify", False)),
        lr="alpha", fused="weight_decouple", wd="wd",
        doc="AdaBelief: Adam on the belief s = EMA((g - m)^2); optional AMSGrad maximum, "
            "decoupled weight decay (p -= p * wd, times alpha unless fixed_decay) and "
            "RAdam rectification. As in nnabla, eps is added into the stored s each step."),
    "RMSprop": SolverSpec(
        (("lr", 0.001), ("decay", 0.9), ("eps", 1e-08)),
        doc="RMSprop: v = decay * v + (1 - decay) * g^2; p -= lr * g / (sqrt(v) + eps)."),
    "RMSpropGraves": SolverSpec(
        (("lr", 0.0001), ("decay", 0.95), ("momentum", 0.9), ("eps", 0.0001)),
        doc="Graves' RMSprop: n and gbar are EMAs of g^2 and g; "
            "d = momentum * d - lr * g / sqrt(n - gbar^2 + eps); p += d."),
    "Adam": SolverSpec(
        _ADAM_ARGS, lr="alpha",
        doc="Adam with bias correction folded into the rate and eps added to the "
            "uncorrected sqrt(v): p -= alpha * sqrt(1 - beta2^t) / (1 - beta1^t) * m / "
            "(sqrt(v) + eps)."),
    "AdaBound": SolverSpec(
        _BOUND_ARGS, lr="alpha",
        doc="AdaBound: Adam whose per-element step is clipped to "
            "[final_lr' (1 - 1 / (gamma t + 1)), final_lr' (1 + 1 / (gamma t))], "
            "final_lr' = final_lr * alpha / initial alpha."),
    "Adamax": SolverSpec(
        (("alpha", 0.002), *_ADAM_ARGS[1:]), lr="alpha",
        doc="Adamax: u = max(beta2 * u, |g|); p -= alpha / (1 - beta1^t) * m / (u + eps)."),
    "AMSGRAD": SolverSpec(
        (*_ADAM_ARGS, ("bias_correction", False)), lr="alpha",
        doc="AMSGrad: Adam on v_hat = max(v_hat, v); bias correction only if "
            "bias_correction."),
    "AMSBound": SolverSpec(
        (*_BOUND_ARGS, ("bias_correction", False)), lr="alpha",
        doc="AMSBound: AMSGrad with AdaBound's clipping; the upper bound is "
            "final_lr' (1 + t / gamma), as nnabla computes it."),
    "AdamW": SolverSpec(
        (*_ADAM_ARGS, ("wd", 0.0001)), lr="alpha", fused=True, wd="wd",
        doc="Adam with decoupled weight decay: p -= adam_step + wd * (alpha / initial alpha)"
            " * p."),
    "SgdW": SolverSpec(
        (("lr", 0.001), ("momentum", 0.9), ("wd", 0.0001)), fused=True, wd="wd",
        doc="Momentum SGD with decoupled weight decay: m = momentum * m + lr * g; "
            "p -= m + wd * (lr / initial lr) * p."),
    "Lars": SolverSpec(
        (("lr", 0.001), ("momentum", 0.9), ("coefficient", 0.001), ("eps", 1e-06)),
        fused=True,
        doc="LARS: local rate lr * coefficient * |p| / (|g| + wd |p|) (lr when |p| < eps); "
            "g += wd * p (written into the gradient); v = momentum * v + rate * g; p -= v."),
    "Lamb": SolverSpec(
        (("eta", 0.001), ("beta1", 0.9), ("beta2", 0.999), ("gamma_l", 0.0),
         ("gamma_u", 10.0), ("eps", 1e-06), ("bias_correction", False)),
        lr="eta", fused=True,
        doc="LAMB: r = m_hat / (sqrt(v_hat) + eps) + wd * p; "
            "p -= eta * clip(|p|, gamma_l, gamma_u) / |r| * r (ratio 1 when |r| <= eps)."),
    "Lion": SolverSpec(
        (("lr", 0.0001), ("beta1", 0.9), ("beta2", 0.99)), fused=True,
        doc="Lion: p -= lr * (sign(beta1 * m + (1 - beta1) * g) + wd * p); "
            "m = beta2 * m + (1 - beta2) * g."),
}
