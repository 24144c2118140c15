"""The CPU update rules against the float64 references in ``refs.py``, over several steps."""
import numpy as np
import pytest
import refs
from nnabla_ext.cpu import solvers as rules

# nnabla 1.39's defaults, written out independently of the solver module.
DEFAULTS = {
    "Sgd": {"lr": 0.001},
    "Momentum": {"lr": 0.001, "momentum": 0.9},
    "Nesterov": {"lr": 0.001, "momentum": 0.9},
    "SgdW": {"lr": 0.001, "momentum": 0.9, "wd": 0.0001},
    "Lars": {"lr": 0.001, "momentum": 0.9, "coefficient": 0.001, "eps": 1e-06},
    "Adadelta": {"lr": 1.0, "decay": 0.95, "eps": 1e-06},
    "Adagrad": {"lr": 0.01, "eps": 1e-08},
    "RMSprop": {"lr": 0.001, "decay": 0.9, "eps": 1e-08},
    "RMSpropGraves": {"lr": 0.0001, "decay": 0.95, "momentum": 0.9, "eps": 0.0001},
    "Adam": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08},
    "AdamW": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "wd": 0.0001},
    "Adamax": {"alpha": 0.002, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08},
    "AMSGRAD": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08,
                "bias_correction": False},
    "AdaBound": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "final_lr": 0.1,
                 "gamma": 0.001},
    "AMSBound": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "final_lr": 0.1,
                 "gamma": 0.001, "bias_correction": False},
    "AdaBelief": {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08, "wd": 0.0,
                  "amsgrad": False, "weight_decouple": False, "fixed_decay": False,
                  "rectify": False},
    "Lamb": {"eta": 0.001, "beta1": 0.9, "beta2": 0.999, "gamma_l": 0.0, "gamma_u": 10.0,
             "eps": 1e-06, "bias_correction": False},
    "Lion": {"lr": 0.0001, "beta1": 0.9, "beta2": 0.99},
}
LR_ARG = {"Adam": "alpha", "AdamW": "alpha", "Adamax": "alpha", "AMSGRAD": "alpha",
          "AdaBound": "alpha", "AMSBound": "alpha", "AdaBelief": "alpha", "Lamb": "eta"}
REF = {"Sgd": refs.ref_sgd, "Momentum": refs.ref_momentum, "Nesterov": refs.ref_nesterov,
       "SgdW": refs.ref_sgdw, "Lars": refs.ref_lars, "Adadelta": refs.ref_adadelta,
       "Adagrad": refs.ref_adagrad, "RMSprop": refs.ref_rmsprop,
       "RMSpropGraves": refs.ref_rmsprop_graves, "Adam": refs.ref_adam, "AdamW": refs.ref_adamw,
       "Adamax": refs.ref_adamax, "AMSGRAD": refs.ref_amsgrad, "AdaBound": refs.ref_adabound,
       "AMSBound": refs.ref_amsbound, "AdaBelief": refs.ref_adabelief, "Lamb": refs.ref_lamb,
       "Lion": refs.ref_lion}

# (solver, overrides of the defaults, fused weight-decay rate in force)
CASES = [(name, {}, DEFAULTS[name].get("wd", 0.0)) for name in DEFAULTS] + [
    ("Sgd", {"lr": 0.5}, 0.0),
    ("Momentum", {"lr": 0.1, "momentum": 0.5}, 0.0),
    ("Lars", {"lr": 0.1}, 1e-3),
    ("Lars", {"lr": 0.1, "eps": 1e3}, 0.0),  # |p| < eps: the plain learning rate
    ("Adam", {"alpha": 0.1, "beta1": 0.5, "beta2": 0.6}, 0.0),
    ("AdamW", {"alpha": 0.01, "wd": 0.1}, 0.1),
    ("AMSGRAD", {"bias_correction": True}, 0.0),
    ("AMSBound", {"alpha": 0.01, "bias_correction": True}, 0.0),
    ("AdaBound", {"alpha": 0.5, "gamma": 0.1}, 0.0),
    ("AdaBelief", {"amsgrad": True, "eps": 0.1}, 0.0),
    ("AdaBelief", {"weight_decouple": True, "wd": 1e-2}, 1e-2),
    ("AdaBelief", {"weight_decouple": True, "fixed_decay": True, "wd": 1e-2}, 1e-2),
    ("AdaBelief", {"rectify": True, "beta2": 0.9}, 0.0),  # rho_t <= 4 (SGD steps) until t=5
    ("AdaBelief", {"rectify": True, "beta2": 0.95, "beta1": 0.5, "amsgrad": True}, 0.0),
    ("Lamb", {"bias_correction": True, "gamma_l": 0.1}, 1e-3),
    ("Lamb", {"gamma_u": 0.5}, 0.0),
    ("Lion", {"lr": 0.01, "beta1": 0.5, "beta2": 0.7}, 1e-2),
]


def _rule_hp(name, overrides, wd):
    hp = {**DEFAULTS[name], **overrides}
    hp = {k: v if isinstance(v, bool) else np.float32(v) for k, v in hp.items()}
    hp["weight_decay_rate"] = np.float32(wd)
    hp["init_lr"] = hp[LR_ARG.get(name, "lr")]
    return hp


def _ref_hp(rule_hp):
    h = {k: v if isinstance(v, bool) else float(v) for k, v in rule_hp.items()}
    h["wd"], h["lr0"] = h["weight_decay_rate"], h["init_lr"]
    return h


def _state_names(rule, hp):
    return list(rule.states) + [s for s, flag in rule.optional_states if hp[flag]]


def _case_id(case):
    name, overrides, wd = case
    return name + "".join(f"-{k}={v}" for k, v in overrides.items()) + f"-wd={wd}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_rule_matches_reference_over_eight_steps(case):
    name, overrides, wd = case
    rule = rules.RULES[name]
    hp = _rule_hp(name, overrides, wd)
    rng = np.random.RandomState(313)
    p = rng.randn(3, 4).astype(np.float32)
    state = {s: np.zeros_like(p) for s in _state_names(rule, hp)}
    p_ref, state_ref = p.astype(np.float64), {k: v.astype(np.float64) for k, v in state.items()}
    for t in range(1, 9):
        g = rng.randn(3, 4).astype(np.float32)
        p_ref, state_ref = REF[name](p_ref, g.astype(np.float64), state_ref, t, _ref_hp(hp))
        rule.update(np, p, g.copy(), state, t, hp)
        np.testing.assert_allclose(p, p_ref, rtol=1e-5, atol=1e-6, err_msg=f"step {t}")
        for k, value in state.items():
            np.testing.assert_allclose(value, state_ref[k], rtol=1e-4, atol=1e-6,
                                       err_msg=f"state {k!r}, step {t}")
    assert p.dtype == np.float32 and all(v.dtype == np.float32 for v in state.values())


def test_every_nnabla_solver_has_a_rule():
    assert sorted(rules.RULES) == sorted(DEFAULTS)


def test_rules_keep_float32_even_with_python_float_hyper_parameters():
    p, g = np.ones(4, np.float32), np.full(4, 0.5, np.float32)
    rules.RULES["Sgd"].update(np, p, g, {}, 1, {"lr": np.float32(0.1)})
    assert p.dtype == np.float32 and np.allclose(p, 0.95)


def test_lars_fused_decay_writes_into_the_gradient():
    p, g = np.ones(4, np.float32), np.zeros(4, np.float32)
    hp = _rule_hp("Lars", {}, 0.5)
    rules.RULES["Lars"].update(np, p, g, {"v": np.zeros(4, np.float32)}, 1, hp)
    np.testing.assert_allclose(g, 0.5)


def test_lars_rejects_a_nan_local_learning_rate():
    p, g = np.ones(4, np.float32), np.full(4, np.nan, np.float32)
    with pytest.raises(ValueError, match="Lars"):
        rules.RULES["Lars"].update(np, p, g, {"v": np.zeros(4, np.float32)}, 1,
                                   _rule_hp("Lars", {}, 0.0))


def test_clip_grad_by_norm_only_shrinks():
    ops = rules.GRAD_OPS
    g = np.array([3.0, 4.0], np.float32)
    ops.clip_grad_by_norm(np, g, 10.0)
    np.testing.assert_allclose(g, [3, 4])
    ops.clip_grad_by_norm(np, g, 1.0)
    np.testing.assert_allclose(g, [0.6, 0.8], rtol=1e-6)
    zero = np.zeros(2, np.float32)
    ops.clip_grad_by_norm(np, zero, 0.5)
    assert not np.isnan(zero).any()


def test_grad_helpers_detect_inf_and_nan():
    ops = rules.GRAD_OPS
    finite, inf, nan = (np.array([1.0, x], np.float32) for x in (2.0, np.inf, np.nan))
    assert not ops.has_inf(np, finite) and ops.has_inf(np, inf) and not ops.has_inf(np, nan)
    assert ops.has_nan(np, nan) and not ops.has_nan(np, inf)
    assert ops.has_inf_or_nan(np, inf) and ops.has_inf_or_nan(np, nan)
    assert not ops.has_inf_or_nan(np, finite)
