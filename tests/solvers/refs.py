"""Independent numpy references of nnabla's solver update rules (float64).

Each ``ref_<name>(p, g, s, t, h)`` takes the parameter, gradient, a dict of state
arrays (same names as nnabla), the step count after increment and a dict of
hyper-parameters, and returns the new ``(p, s)`` without modifying its inputs.
``wd`` in ``h`` is the fused weight-decay rate in force; ``lr0`` the initial rate.
"""
import numpy as np


def ref_sgd(p, g, s, t, h):
    return p - h["lr"] * g, s


def ref_momentum(p, g, s, t, h):
    m = h["momentum"] * s["m"] + h["lr"] * g
    return p - m, {"m": m}


def ref_nesterov(p, g, s, t, h):
    m = h["momentum"] * s["m"] - h["lr"] * g
    return p - h["momentum"] * s["m"] + (1 + h["momentum"]) * m, {"m": m}


def ref_sgdw(p, g, s, t, h):
    m = h["momentum"] * s["m"] + h["lr"] * g
    return p - m - h["wd"] * (h["lr"] / h["lr0"]) * p, {"m": m}


def ref_lars(p, g, s, t, h):
    p_norm, g_norm = np.linalg.norm(p), np.linalg.norm(g)
    local = h["lr"] if p_norm < h["eps"] else (
        h["lr"] * h["coefficient"] * p_norm / (g_norm + h["wd"] * p_norm))
    v = h["momentum"] * s["v"] + local * (g + h["wd"] * p)
    return p - v, {"v": v}


def ref_adadelta(p, g, s, t, h):
    rho, eps = h["decay"], h["eps"]
    eg = rho * s["e_sqr_grad"] + (1 - rho) * g**2
    dx = np.sqrt(s["e_sqr_delta"] + eps) / np.sqrt(eg + eps) * g
    ed = rho * s["e_sqr_delta"] + (1 - rho) * dx**2
    return p - h["lr"] * dx, {"e_sqr_grad": eg, "e_sqr_delta": ed}


def ref_adagrad(p, g, s, t, h):
    v = s["v"] + g**2
    return p - h["lr"] * g / (np.sqrt(v) + h["eps"]), {"v": v}


def ref_rmsprop(p, g, s, t, h):
    v = h["decay"] * s["v"] + (1 - h["decay"]) * g**2
    return p - h["lr"] * g / (np.sqrt(v) + h["eps"]), {"v": v}


def ref_rmsprop_graves(p, g, s, t, h):
    rho = h["decay"]
    n = rho * s["n"] + (1 - rho) * g**2
    gm = rho * s["g"] + (1 - rho) * g
    d = h["momentum"] * s["d"] - h["lr"] * g / np.sqrt(n - gm**2 + h["eps"])
    return p + d, {"n": n, "g": gm, "d": d}


def _adam_moments(g, m, v, h):
    return h["beta1"] * m + (1 - h["beta1"]) * g, h["beta2"] * v + (1 - h["beta2"]) * g**2


def _adam_lr(h, t):
    return h["alpha"] * np.sqrt(1 - h["beta2"] ** t) / (1 - h["beta1"] ** t)


def ref_adam(p, g, s, t, h):
    m, v = _adam_moments(g, s["mean"], s["var"], h)
    return p - _adam_lr(h, t) * m / (np.sqrt(v) + h["eps"]), {"mean": m, "var": v}


def ref_adamw(p, g, s, t, h):
    m, v = _adam_moments(g, s["mean"], s["var"], h)
    decay = h["wd"] * (h["alpha"] / h["lr0"]) * p
    return p - _adam_lr(h, t) * m / (np.sqrt(v) + h["eps"]) - decay, {"mean": m, "var": v}


def ref_adamax(p, g, s, t, h):
    m = h["beta1"] * s["m"] + (1 - h["beta1"]) * g
    u = np.maximum(h["beta2"] * s["u"], np.abs(g))
    return p - h["alpha"] / (1 - h["beta1"] ** t) * m / (u + h["eps"]), {"m": m, "u": u}


def ref_amsgrad(p, g, s, t, h):
    m, v = _adam_moments(g, s["m"], s["v"], h)
    v_hat = np.maximum(s["v_hat"], v)
    lr = _adam_lr(h, t) if h["bias_correction"] else h["alpha"]
    return p - lr * m / (np.sqrt(v_hat) + h["eps"]), {"m": m, "v": v, "v_hat": v_hat}


def ref_adabound(p, g, s, t, h):
    m, v = _adam_moments(g, s["mean"], s["var"], h)
    final = h["final_lr"] * h["alpha"] / h["lr0"]
    low, high = final * (1 - 1 / (h["gamma"] * t + 1)), final * (1 + 1 / (h["gamma"] * t))
    step = np.clip(_adam_lr(h, t) / (np.sqrt(v) + h["eps"]), low, high)
    return p - step * m, {"mean": m, "var": v}


def ref_amsbound(p, g, s, t, h):
    # nnabla's upper bound is final_lr * (1 + t / gamma): operator precedence in its kernel.
    m, v = _adam_moments(g, s["m"], s["v"], h)
    v_hat = np.maximum(s["v_hat"], v)
    lr = _adam_lr(h, t) if h["bias_correction"] else h["alpha"]
    final = h["final_lr"] * h["alpha"] / h["lr0"]
    low, high = final * (1 - 1 / (h["gamma"] * t + 1)), final * (1 + t / h["gamma"])
    step = np.clip(lr / (np.sqrt(v_hat) + h["eps"]), low, high)
    return p - step * m, {"m": m, "v": v, "v_hat": v_hat}


def ref_adabelief(p, g, s, t, h):
    b1, b2, eps = h["beta1"], h["beta2"], h["eps"]
    m = b1 * s["mean"] + (1 - b1) * g
    var = b2 * s["var"] + (1 - b2) * (g - m) ** 2
    out = {"mean": m, "var": var}
    if h["amsgrad"]:
        out["s_max"] = np.maximum(s["s_max"], var) + eps
        second = out["s_max"]
    else:
        out["var"] = second = var + eps
    if h["weight_decouple"]:
        p = p * (1 - (h["wd"] if h["fixed_decay"] else h["wd"] * h["alpha"]))
    r = 1.0
    if h["rectify"]:
        rho_inf = 2 / (1 - b2) - 1
        rho = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho <= 4:
            return p - h["alpha"] * m, out
        r = np.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
    lr = h["alpha"] * r / (1 - b1**t)
    return p - lr * m / (np.sqrt(second / (1 - b2**t)) + eps), out


def ref_lamb(p, g, s, t, h):
    m, v = _adam_moments(g, s["mean"], s["var"], h)
    c1, c2 = (1 - h["beta1"] ** t, 1 - h["beta2"] ** t) if h["bias_correction"] else (1, 1)
    r = (m / c1) / (np.sqrt(v / c2) + h["eps"]) + h["wd"] * p
    trust = np.clip(np.linalg.norm(p), h["gamma_l"], h["gamma_u"])
    r_norm = np.linalg.norm(r)
    ratio = trust / r_norm if r_norm > h["eps"] else 1.0
    return p - h["eta"] * ratio * r, {"mean": m, "var": v}


def ref_lion(p, g, s, t, h):
    direction = np.sign(h["beta1"] * s["m"] + (1 - h["beta1"]) * g)
    m = h["beta2"] * s["m"] + (1 - h["beta2"]) * g
    return p - h["lr"] * (direction + h["wd"] * p), {"m": m}
