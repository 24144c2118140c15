"""The fused native solver updates against the numpy rules they replace: bit for bit.

``nnabla_ext.cpu.solvers.RULES`` runs every solver but Lars, Lamb and AdaBelief as one native
pass (``_native.solver_update``) on C-contiguous float32 arrays; the generic ``xp`` functions
(``GENERIC_UPDATES``) are the reference, run on copies.
"""
import numpy as np
import pytest
import nnabla_ext.cpu
from nnabla_ext.cpu import _native
from nnabla_ext.cpu import solvers as rules

# (solver, hyper-parameters); the learning-rate argument is also the initial one unless
# init_lr says otherwise (SgdW and AdamW scale their decay by lr / init_lr).
CASES = [
    ("Sgd", {"lr": 0.001}),
    ("Sgd", {"lr": 0.37}),
    ("Momentum", {"lr": 0.001, "momentum": 0.9}),
    ("Momentum", {"lr": 0.3, "momentum": 0.55}),
    ("Nesterov", {"lr": 0.001, "momentum": 0.9}),
    ("Nesterov", {"lr": 0.07, "momentum": 0.33}),
    ("SgdW", {"lr": 0.001, "momentum": 0.9, "weight_decay_rate": 0.0001}),
    ("SgdW", {"lr": 0.03, "momentum": 0.7, "weight_decay_rate": 0.1, "init_lr": 0.1}),
    ("Adagrad", {"lr": 0.01, "eps": 1e-08}),
    ("Adagrad", {"lr": 0.3, "eps": 0.1}),
    ("RMSprop", {"lr": 0.001, "decay": 0.9, "eps": 1e-08}),
    ("RMSprop", {"lr": 0.2, "decay": 0.3, "eps": 1e-3}),
    ("Adam", {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08}),
    ("Adam", {"alpha": 0.1, "beta1": 0.5, "beta2": 0.6, "eps": 1e-3}),
    ("AdamW", {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08,
               "weight_decay_rate": 0.0001}),
    ("AdamW", {"alpha": 0.02, "beta1": 0.8, "beta2": 0.95, "eps": 1e-6,
               "weight_decay_rate": 0.1, "init_lr": 0.05}),
    ("Adamax", {"alpha": 0.002, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08}),
    ("Adamax", {"alpha": 0.05, "beta1": 0.6, "beta2": 0.7, "eps": 1e-3}),
    ("AMSGRAD", {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08,
                 "bias_correction": False}),
    ("AMSGRAD", {"alpha": 0.03, "beta1": 0.7, "beta2": 0.8, "eps": 1e-4,
                 "bias_correction": True}),
    ("Adadelta", {"lr": 1.0, "decay": 0.95, "eps": 1e-06}),
    ("Adadelta", {"lr": 0.3, "decay": 0.5, "eps": 1e-2}),
    ("RMSpropGraves", {"lr": 0.0001, "decay": 0.95, "momentum": 0.9, "eps": 0.0001}),
    ("RMSpropGraves", {"lr": 0.05, "decay": 0.6, "momentum": 0.3, "eps": 0.01}),
    ("AdaBound", {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08,
                  "final_lr": 0.1, "gamma": 0.001}),
    ("AdaBound", {"alpha": 0.5, "beta1": 0.6, "beta2": 0.9, "eps": 1e-3, "final_lr": 0.2,
                  "gamma": 0.1, "init_lr": 0.25}),
    ("AMSBound", {"alpha": 0.001, "beta1": 0.9, "beta2": 0.999, "eps": 1e-08,
                  "final_lr": 0.1, "gamma": 0.001, "bias_correction": False}),
    ("AMSBound", {"alpha": 0.01, "beta1": 0.7, "beta2": 0.9, "eps": 1e-4, "final_lr": 0.3,
                  "gamma": 0.2, "bias_correction": True}),
    ("Lion", {"lr": 0.0001, "beta1": 0.9, "beta2": 0.99}),
    ("Lion", {"lr": 0.01, "beta1": 0.5, "beta2": 0.7, "weight_decay_rate": 0.01}),
]
# Odd and even sizes below one native chunk (2**14), across chunks, and above the size
# from which the chunks run on several threads (2**18).
SIZES = [1, 7, 1000, 2**14 + 3, 300_007]
LR_ARG = {"Adam": "alpha", "AdamW": "alpha", "Adamax": "alpha", "AMSGRAD": "alpha",
          "AdaBound": "alpha", "AMSBound": "alpha"}


def _hp(name, values):
    hp = {k: v if isinstance(v, bool) else np.float32(v) for k, v in values.items()}
    hp.setdefault("weight_decay_rate", np.float32(0))
    hp.setdefault("init_lr", hp[LR_ARG.get(name, "lr")])
    return hp


def _random(rng, size, scale_exponents=6):
    """Normal values times powers of two over a wide range, with some zeros of both signs."""
    x = rng.randn(size) * 2.0 ** rng.randint(-scale_exponents, scale_exponents + 1, size)
    x[rng.rand(size) < 0.01] = 0
    x[rng.rand(size) < 0.01] = -0.0
    return x.astype(np.float32)


def assert_same_bits(given, expected, err_msg):
    """Equal float32 arrays bit for bit (the sign of zero included)."""
    np.testing.assert_array_equal(given.view(np.uint32), expected.view(np.uint32),
                                  err_msg=err_msg)


def _states(rng, rule, size):
    states = {s: _random(rng, size) for s in rule.states}
    for name in set(states) & {"v", "var", "u", "v_hat", "e_sqr_grad", "e_sqr_delta"}:
        # second-moment and maximum states stay non-negative, as the rules keep them
        # (zeros keep their sign: numpy's maximum of +0 and -0 is its second operand)
        states[name] = np.where(states[name] == 0, states[name], np.abs(states[name]))
    if "n" in states:   # RMSpropGraves: n - g^2 stays clear of 0, as a variance would
        states["n"] = states["g"] * states["g"] + np.abs(states["n"]) + np.float32(1)
    return states


def _case_id(case):
    name, values = case
    return name + "-" + ",".join(f"{k}={v}" for k, v in values.items())


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request):
    before = nnabla_ext.cpu.get_num_threads()
    nnabla_ext.cpu.set_num_threads(request.param)
    yield request.param
    nnabla_ext.cpu.set_num_threads(before)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_fused_update_is_bit_identical_to_the_numpy_rule(case, size, threads):
    name, values = case
    rule, generic, hp = rules.RULES[name], rules.GENERIC_UPDATES[name], _hp(name, values)
    rng = np.random.RandomState(size + len(values))
    p, state = _random(rng, size), _states(rng, rule, size)
    p_ref, state_ref = p.copy(), {k: v.copy() for k, v in state.items()}
    for t in range(1, 6):
        g = _random(rng, size)
        rule.update(np, p, g.copy(), state, t, hp)
        generic(np, p_ref, g, state_ref, t, hp)
        assert_same_bits(p, p_ref, err_msg=f"{name} p, step {t}")
        for k in state:
            assert_same_bits(state[k], state_ref[k], err_msg=f"{name} state {k!r}, step {t}")


@pytest.mark.parametrize("case", CASES[::2], ids=_case_id)
def test_native_update_runs_on_contiguous_float32_arrays(case):
    name, values = case
    rule, hp = rules.RULES[name], _hp(name, values)
    p, g = np.ones(5, np.float32), np.full(5, 0.5, np.float32)
    states = tuple(np.zeros(5, np.float32) for _ in rule.states)
    scalars = getattr(rules, f"_{rule.update.__name__[:-len('_fused')]}_scalars")(hp, 1)
    assert _native.solver_update(name, p, g, states, scalars) is True
    assert not np.array_equal(p, np.ones(5, np.float32))


def _strided(a):
    out = np.zeros(2 * a.size, np.float32)
    out[::2] = a
    return out[::2]


def _read_only(a):
    a = a.copy()
    a.flags.writeable = False
    return a


def _adam_arrays(layout):
    """(p, g, m, v) for Adam in the given layout, the same values on every call."""
    rng = np.random.RandomState(5)
    p, g = _random(rng, 64), _random(rng, 64)
    m, v = _random(rng, 64), np.abs(_random(rng, 64))
    if layout == "strided p":
        p = _strided(p)
    elif layout == "strided state":
        m = _strided(m)
    elif layout == "float64 g":
        g = g.astype(np.float64)
    elif layout == "big-endian g":
        g = g.astype(">f4")
    elif layout == "state aliases g":
        g = m
    elif layout == "p overlaps state":
        buffer = np.concatenate([p, m[:32]])
        p, m = buffer[:64], buffer[32:96]
    return p, g, m, v


@pytest.mark.parametrize("layout", ["strided p", "strided state", "float64 g",
                                    "big-endian g", "state aliases g", "p overlaps state"])
def test_arrays_the_native_loop_refuses_take_the_numpy_rule(layout):
    hp = _hp("Adam", CASES[12][1])
    p, g, m, v = _adam_arrays(layout)
    assert not _native.solver_update("Adam", p, g, (m, v), rules._adam_scalars(hp, 1))
    np.testing.assert_array_equal(p, _adam_arrays(layout)[0])   # nothing written
    rules.RULES["Adam"].update(np, p, g, {"mean": m, "var": v}, 1, hp)
    p_ref, g_ref, m_ref, v_ref = _adam_arrays(layout)
    rules.adam(np, p_ref, g_ref, {"mean": m_ref, "var": v_ref}, 1, hp)
    for given, want in ((p, p_ref), (m, m_ref), (v, v_ref)):
        np.testing.assert_array_equal(given, want)


def test_a_read_only_parameter_is_refused_before_anything_is_written():
    hp = _hp("Momentum", CASES[2][1])
    p, g, m = _read_only(np.ones(8, np.float32)), np.ones(8, np.float32), np.ones(8, np.float32)
    assert not _native.solver_update("Momentum", p, g, (m,), rules._momentum_scalars(hp, 1))
    np.testing.assert_array_equal(m, 1)


class _CountingNamespace:
    """numpy under another name, counting the functions the rule asks for."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        self.calls.append(name)
        return getattr(np, name)


def test_another_array_namespace_runs_the_generic_rule():
    xp, hp = _CountingNamespace(), _hp("Adam", CASES[12][1])
    p, g = np.ones(4, np.float32), np.full(4, 0.5, np.float32)
    state = {"mean": np.zeros(4, np.float32), "var": np.zeros(4, np.float32)}
    rules.RULES["Adam"].update(xp, p, g, state, 1, hp)
    assert "sqrt" in xp.calls


def test_the_switch_forces_the_numpy_rule(monkeypatch):
    calls = []
    monkeypatch.setattr(rules, "NATIVE_UPDATES", False)
    monkeypatch.setattr(rules._native, "solver_update", lambda *a: calls.append(a))
    p, g = np.ones(4, np.float32), np.full(4, 0.5, np.float32)
    rules.RULES["Sgd"].update(np, p, g, {}, 1, {"lr": np.float32(0.5)})
    np.testing.assert_array_equal(p, 0.75)
    assert calls == []


def test_solver_update_rejects_an_unknown_rule_or_wrong_counts():
    p = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="no fused rule 'Lamb'"):
        _native.solver_update("Lamb", p, p.copy(), (), [1.0])
    with pytest.raises(ValueError, match="Adam takes 2 states and 6 scalars; given 1 and 6"):
        _native.solver_update("Adam", p, p.copy(), (p.copy(),), [1.0] * 6)


def test_every_fused_rule_has_a_generic_update_and_a_case():
    fused = {name for name, rule in rules.RULES.items() if rule.update.__name__.endswith("_fused")}
    assert fused == set(rules.GENERIC_UPDATES) == {name for name, _ in CASES}


@pytest.mark.parametrize("case", CASES[::2], ids=_case_id)
def test_infinite_and_nan_gradients_give_the_numpy_results(case):
    name, values = case
    rule, generic, hp = rules.RULES[name], rules.GENERIC_UPDATES[name], _hp(name, values)
    rng = np.random.RandomState(11)
    p, state = _random(rng, 40), _states(rng, rule, 40)
    p_ref, state_ref = p.copy(), {k: v.copy() for k, v in state.items()}
    for t in (1, 2):
        g = _random(rng, 40)
        g[[3, 17]], g[[5, 29]], g[11] = np.inf, -np.inf, np.nan
        with np.errstate(invalid="ignore", over="ignore"):
            rule.update(np, p, g.copy(), state, t, hp)
            generic(np, p_ref, g, state_ref, t, hp)
        np.testing.assert_array_equal(p, p_ref, err_msg=f"{name} p, step {t}")
        for k in state:
            np.testing.assert_array_equal(state[k], state_ref[k], err_msg=f"{name} {k}, step {t}")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("rate", [1e-5, 0.3, -2.0])
def test_native_weight_decay_is_bit_identical_to_numpy(size, rate, threads):
    # Solver.weight_decay's g += p * rate, as one native pass on float32 numpy arrays
    rng = np.random.RandomState(size)
    p, g = _random(rng, size), _random(rng, size)
    p[:3] = [np.inf, -np.inf, np.nan] if size >= 3 else p[:3]
    expected = g + p * np.float32(rate)
    given = g.copy()
    rules.weight_decay(np, p, given, rate)
    assert_same_bits(given, expected, err_msg=f"weight decay {rate}, size {size}")
    assert _native.solver_update("AddScaled", g.copy(), p, (), (np.float32(rate),))


def test_weight_decay_on_arrays_the_native_loop_refuses_takes_numpy(monkeypatch):
    rng = np.random.RandomState(4)
    p, g = _random(rng, 40).reshape(8, 5), _random(rng, 40).reshape(8, 5)
    for strided_p, strided_g in ((p[:, ::2], g[:, ::2].copy()),       # non-contiguous p
                                 (p[:, :2].astype(np.float64), g[:, :2].copy())):  # float64
        expected = strided_g.copy()
        expected += strided_p * np.float32(0.5)
        rules.weight_decay(np, strided_p, strided_g, 0.5)
        np.testing.assert_array_equal(strided_g, expected)
    calls = []
    monkeypatch.setattr(rules._native, "solver_update", lambda *a: calls.append(a) or True)
    monkeypatch.setattr(rules, "NATIVE_UPDATES", False)
    q = np.ones(4, np.float32)
    rules.weight_decay(np, q, q.copy(), 0.5)
    assert calls == []                      # the switch forces the numpy rule
