"""nnabla.solvers through the public API: signatures, numbers, weight decay and gradient ops."""
import inspect
import pathlib

import nnabla as nn
import nnabla.solvers as S
import numpy as np
import pytest
from test_rules import CASES, DEFAULTS, LR_ARG, REF

SHAPES = {"zZzZ": (2, 3, 4), "bbb": (3, 4, 1, 2), "scalar": ()}
SIGNATURES = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_signatures.tsv"


def make_params(rng):
    params = {}
    for key, shape in SHAPES.items():
        params[key] = nn.Variable.from_numpy_array(
            np.asarray(rng.randn(*shape), np.float32), need_grad=True)
        params[key].g = np.asarray(rng.randn(*shape), np.float32)
    return params


@pytest.mark.conformance
@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_solver_function_has_nnabla_signature(name):
    expected = [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=v)
                for k, v in DEFAULTS[name].items()]
    assert inspect.signature(getattr(S, name)) == inspect.Signature(expected)
    assert getattr(S, name)().name == name


@pytest.mark.conformance
def test_signatures_match_the_conformance_table():
    rows = [line.split("\t") for line in SIGNATURES.read_text().splitlines()
            if line.startswith("nnabla.solvers\t")]
    assert set(DEFAULTS) <= {name for _, name, _ in rows}
    for _, name, signature in rows:
        assert hasattr(S, name), f"S.{name} is missing"
        if signature != "(?)":        # nnabla's C++ Solver class has no inspectable signature
            assert str(inspect.signature(getattr(S, name))) == signature, name


def _solver_and_refs(name, overrides, seed=313):
    rng = np.random.RandomState(seed)
    params = make_params(rng)
    solver = getattr(S, name)(**overrides)
    solver.set_parameters(params)
    hp = {**DEFAULTS[name], **overrides}
    h = {k: v if isinstance(v, bool) else float(np.float32(v)) for k, v in hp.items()}
    h["lr0"] = h[LR_ARG.get(name, "lr")]
    ref_p = {k: v.d.astype(np.float64) for k, v in params.items()}
    names = [n for n in solver.get_states()["bbb"].pstate]
    ref_s = {k: {n: np.zeros(SHAPES[k]) for n in names} for k in params}
    return rng, params, solver, h, ref_p, ref_s


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0] + str(sorted(c[1].items())))
def test_solver_update_matches_reference_with_weight_decay(case):
    name, overrides, _ = case
    rng, params, solver, h, ref_p, ref_s = _solver_and_refs(name, overrides)
    for i in range(5):
        decay = 1e-4 * (i % 2) * 10
        grads = {k: np.asarray(rng.randn(*SHAPES[k]), np.float32) for k in params}
        for k, g in grads.items():
            params[k].g = g
        solver.weight_decay(decay)
        # A fused solver takes the rate given to weight_decay() for this update, even 0.
        h["wd"] = float(np.float32(decay)) if solver.weight_decay_is_fused() else 0.0
        solver.update()
        for k, p in params.items():
            g = grads[k].astype(np.float64)
            if not solver.weight_decay_is_fused():
                g = g + float(np.float32(decay)) * ref_p[k]
            ref_p[k], ref_s[k] = REF[name](ref_p[k], g, ref_s[k], i + 1, h)
            np.testing.assert_allclose(p.d, ref_p[k], rtol=1e-5, atol=1e-6,
                                       err_msg=f"step {i + 1}, {k}")
        assert all(state.t == i + 1 for state in solver.get_states().values())


def test_learning_rate_is_stored_as_float32():
    solver = S.Adam(alpha=1e-3)
    assert solver.learning_rate() == 0.0010000000474974513
    solver.set_learning_rate(0.1)
    assert solver.learning_rate() == float(np.float32(0.1))
    assert S.Lamb(eta=0.5).learning_rate() == 0.5


def test_adamw_decay_follows_the_learning_rate_schedule():
    p = nn.Variable.from_numpy_array(np.ones(2, np.float32), need_grad=True)
    solver = S.AdamW(alpha=0.1, wd=0.5)
    solver.set_parameters({"p": p})
    solver.set_learning_rate(0.05)
    p.g = np.zeros(2, np.float32)
    solver.update()
    np.testing.assert_allclose(p.d, 1 - 0.5 * (0.05 / 0.1), rtol=1e-6)


def test_fused_weight_decay_lasts_one_update_and_leaves_the_gradient():
    p = nn.Variable.from_numpy_array(np.ones(2, np.float32), need_grad=True)
    solver = S.SgdW(lr=1.0, momentum=0.0, wd=0.25)
    solver.set_parameters({"p": p})
    assert solver.weight_decay_is_fused()
    p.g = np.zeros(2, np.float32)
    solver.weight_decay(0.5)
    np.testing.assert_array_equal(p.g, 0)
    solver.update()
    np.testing.assert_allclose(p.d, 0.5)
    solver.update()  # back to the default rate 0.25
    np.testing.assert_allclose(p.d, 0.375)


def test_plain_weight_decay_adds_to_the_gradient_at_once():
    p = nn.Variable.from_numpy_array(np.full(2, 2.0, np.float32), need_grad=True)
    solver = S.Momentum()
    solver.set_parameters({"p": p})
    p.g = np.ones(2, np.float32)
    solver.weight_decay(0.5)
    np.testing.assert_allclose(p.g, 2.0)
    assert not solver.weight_decay_is_fused()


def test_adabelief_fuses_weight_decay_only_with_weight_decouple():
    assert S.AdaBelief(weight_decouple=True).weight_decay_is_fused()
    assert not S.AdaBelief().weight_decay_is_fused()


def test_clip_grad_by_norm_and_scale_grad():
    rng = np.random.RandomState(0)
    params = make_params(rng)
    solver = S.Sgd()
    solver.set_parameters(params)
    before = {k: p.g.copy() for k, p in params.items()}
    solver.clip_grad_by_norm(0.5)
    for k, p in params.items():
        norm = np.sqrt(np.sum(before[k].astype(np.float64) ** 2))
        np.testing.assert_allclose(p.g, before[k] * 0.5 / max(0.5, norm), rtol=1e-5)
    clipped = {k: p.g.copy() for k, p in params.items()}
    solver.scale_grad(10.0)
    for k, p in params.items():
        np.testing.assert_allclose(p.g, clipped[k] * 10, rtol=1e-6)


@pytest.mark.parametrize(("method", "values"), [
    ("check_inf_grad", [np.inf, -np.inf]), ("check_nan_grad", [np.nan]),
    ("check_inf_or_nan_grad", [np.inf, np.nan])])
def test_checks_find_inf_and_nan_in_any_gradient(method, values):
    params = make_params(np.random.RandomState(1))
    solver = S.Adam()
    solver.set_parameters(params)
    assert getattr(solver, method)() is False
    for value in values:
        params["bbb"].g.flat[5] = value
        assert getattr(solver, method)() is True
        params["bbb"].g.flat[5] = 0


def test_hooks_run_around_each_parameter():
    params = make_params(np.random.RandomState(2))
    solver = S.Sgd()
    solver.set_parameters(params)
    calls = []
    solver.update(lambda: calls.append("pre"), lambda: calls.append("post"))
    assert calls == ["pre", "post"] * len(params)
    calls.clear()
    solver.clip_grad_by_norm(1.0, pre_hook=lambda: calls.append("c"))
    assert calls == ["c"] * len(params)


def test_update_skips_gradients_that_were_only_zeroed():
    xs = [nn.Variable((2, 3), need_grad=True) for _ in range(3)]
    solver = S.Sgd(1.0)
    solver.set_parameters({str(i): x for i, x in enumerate(xs)})
    for x in xs:
        x.data.fill(1)
        x.grad.zero()
    solver.weight_decay(1.0)
    solver.update()
    for x in xs:
        assert x.grad.zeroing
        np.testing.assert_allclose(x.d, 1)
    for x in xs:
        x.grad.fill(1)
    solver.weight_decay(0.1)
    solver.update()
    for x in xs:
        np.testing.assert_allclose(x.d, 1 - 1.1, rtol=1e-6)


def test_zero_grad_zeroes_registered_gradients():
    params = make_params(np.random.RandomState(3))
    solver = S.Sgd()
    solver.set_parameters(params)
    solver.zero_grad()
    assert all(not p.g.any() for p in params.values())


def test_bad_arguments_raise_type_errors():
    with pytest.raises(TypeError, match="alpha"):
        S.Adam(alpha="fast")
    with pytest.raises(TypeError):
        S.Sgd(0.1, 0.2)
    with pytest.raises(TypeError, match="'w'"):
        S.Sgd().set_parameters({"w": np.zeros(3)})


def test_solver_api_passes_the_current_context():
    @S.solver_api
    def make(ctx, lr=0.5):
        return ctx, lr

    assert str(inspect.signature(make)) == "(lr=0.5)"
    ctx, lr = make(lr=0.25)
    assert lr == 0.25 and ctx == nn.get_current_context()
