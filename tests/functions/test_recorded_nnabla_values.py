"""Values recorded from nnabla 1.39.0 (``tools/record_nnabla_reference.py``), and the pinned
defaults of the spec-generated ``nnabla.function_bases``.

``tests/data/nnabla_1.39_function_bases.tsv`` holds nnabla's ``function_bases`` signatures: their
defaults are the function spec's, which the adapters in ``nnabla.functions`` may hide by passing
every argument. ``tests/data/nnabla_1.39_recorded_values.json`` holds batch normalization's
running statistics and GELU's forward and backward.
"""
import inspect
import json
import pathlib

import nnabla as nn
import nnabla.function_bases as fb
import nnabla.functions as F
import numpy as np
import pytest

from nnabla._spec import SPECS
from nnabla.testing.function_cases import ALL_CASES

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
RECORDED = json.loads((DATA / "nnabla_1.39_recorded_values.json").read_text())
BASES = dict(line.split("\t") for line in
             (DATA / "nnabla_1.39_function_bases.tsv").read_text().splitlines()[1:])
OURS = {spec.snake for spec in SPECS.values()}


# nnabla 1.39's function_bases leaves these arguments without a usable default (None, or none
# at all for mean_subtraction's t); ours carry the value the spec gives them, which is what
# nnabla's own F.<name> wrapper passes. Any other difference fails.
FILLED_DEFAULTS = {
    "clip_grad_by_norm": {"clip_norm": 1.0},
    "group_normalization": {"num_groups": 1, "channel_axis": 1},
    "instance_normalization": {"channel_axis": 1},
    "mean_subtraction": {"t": None},
    "nms_detection2d": {"thresh": 0.5, "nms": 0.45, "nms_per_class": True},
    "norm": {"p": 2.0},
    "norm_normalization": {"p": 2.0},
    "onnx_non_max_suppression": {"center_point_box": 0, "max_output_boxes_per_class": 0,
                                 "iou_threshold": 0.0, "score_threshold": 0.0},
    "onnx_resize": {"cubic_coeff_a": -0.75, "exclude_outside": 0, "extrapolation_value": 0.0},
    "pad_packed_sequence": {"padding_value": 0.0, "total_length": -1},
    "sync_batch_normalization": {"group": "world"},
    "weight_standardization": {"channel_axis": 0},
}


def _nnabla_signature(name):
    """nnabla's recorded signature with the FILLED_DEFAULTS put in."""
    namespace = {}
    exec(f"def f{BASES[name]}: pass", {}, namespace)   # recorded text from our own tests/data
    signature = inspect.signature(namespace["f"])
    filled = FILLED_DEFAULTS.get(name, {})
    return signature.replace(parameters=[
        p.replace(default=filled[p.name]) if p.name in filled else p
        for p in signature.parameters.values()])


@pytest.mark.conformance
@pytest.mark.parametrize("name", sorted(set(BASES) - {"function_api"}))
def test_function_bases_signature_and_defaults_are_nnablas(name):
    # function_api is nnabla's decorator for the generated functions, not a function.
    assert str(inspect.signature(getattr(fb, name))) == str(_nnabla_signature(name))


def test_every_spec_function_is_in_nnablas_function_bases():
    assert sorted(OURS - set(BASES)) == []


def _bn_inputs():
    inputs = RECORDED["batch_normalization"]["inputs"]
    return [np.asarray(inputs[k], np.float32) for k in ("x", "beta", "gamma", "mean", "variance")]


BN_CALLS = {
    "F.batch_normalization eps=0.5": lambda *v: F.batch_normalization(*v, batch_stat=True,
                                                                      eps=0.5),
    "F.batch_normalization decay_rate=0.7": lambda *v: F.batch_normalization(
        *v, decay_rate=0.7, batch_stat=True),
    "function_bases.batch_normalization defaults": lambda *v: fb.batch_normalization(*v),
}


@pytest.mark.parametrize("row", RECORDED["batch_normalization"]["calls"], ids=lambda r: r["call"])
def test_batch_normalization_running_statistics_match_nnabla(row):
    variables = [nn.Variable.from_numpy_array(a) for a in _bn_inputs()]
    y = BN_CALLS[row["call"]](*variables)
    y.forward()
    np.testing.assert_allclose(y.d, row["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variables[3].d, row["running_mean"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(variables[4].d, row["running_variance"], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("decay_rate, eps", [(0.9, 0.5), (0.25, 3.0)])
def test_running_variance_is_the_unbiased_batch_variance_without_eps(decay_rate, eps):
    # numpy formula: rv' = d rv + (1 - d) var_unbiased; eps only enters the normalization.
    x, beta, gamma, mean, var = _bn_inputs()
    variables = [nn.Variable.from_numpy_array(a) for a in (x, beta, gamma, mean, var)]
    F.batch_normalization(*variables, decay_rate=decay_rate, eps=eps, batch_stat=True).forward()
    x64 = x.astype(np.float64)
    batch_var = x64.var(axis=(0, 2), keepdims=True, ddof=1)
    batch_mean = x64.mean(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(variables[3].d, decay_rate * mean + (1 - decay_rate) * batch_mean,
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(variables[4].d, decay_rate * var + (1 - decay_rate) * batch_var,
                               rtol=1e-6, atol=1e-7)


def test_gelu_forward_and_backward_match_nnablas_tanh_form():
    gelu = RECORDED["gelu"]
    x = nn.Variable.from_numpy_array(np.asarray(gelu["x"], np.float32), need_grad=True)
    y = F.gelu(x)
    y.forward()
    x.grad.zero()
    y.backward(np.asarray(gelu["dy"], np.float32))
    np.testing.assert_allclose(y.d, gelu["y"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.g, gelu["dx"], rtol=1e-5, atol=1e-6)


CASES_BY_ID = {str(c): c for c in ALL_CASES}


def _run_like_the_recorder(case, grad_inputs):
    """tools/record_nnabla_reference.py's run_case, on our nnabla.function_bases."""
    arrays, position = case.make_inputs(), iter(range(10 ** 6))

    def variable(a):
        i = next(position)
        wanted = a is not None and a.dtype.kind == "f" and (grad_inputs is None
                                                             or i in grad_inputs)
        return None if a is None else nn.Variable.from_numpy_array(a.copy(), need_grad=wanted)
    xs = [[variable(a) for a in x] if isinstance(x, list) else variable(x) for x in arrays]
    flat = [v for x in xs for v in (x if isinstance(x, list) else [x])]
    ys = getattr(fb, SPECS[case.name].snake)(*(xs[0] if isinstance(xs[0], list) else xs),
                                              **case.args)
    ys = list(ys) if isinstance(ys, (tuple, list)) else [ys]
    nn.forward_all(ys)
    outputs = [y.d.copy() for y in ys]
    for v in flat:
        if v is not None and v.need_grad:
            v.grad.zero()
    return ys, outputs, flat


# (case, input): nnabla 1.39 returns NaN for every element of this gradient.
NNABLA_NAN_GRADIENTS = {("SpectralNorm-test-output-u", 0)}


@pytest.mark.parametrize("row", RECORDED["convention_gradients"], ids=lambda r: r["case"])
def test_gradient_conventions_match_nnabla(row):
    # Straight-through estimators, rounding, quantizers, gradient clipping, Cholesky, ...:
    # backward is a convention, not the derivative of forward, so nnabla's values pin it.
    case = CASES_BY_ID[row["case"]]
    ys, outputs, flat = _run_like_the_recorder(case, row.get("grad_inputs"))
    for y, dy in zip(ys, row["dys"]):
        y.backward(np.asarray(dy, np.float32))
    for i, (got, expected) in enumerate(zip(outputs, row["outputs"])):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")
    for i, (v, expected) in enumerate(zip(flat, row["grads"])):
        assert (v is not None and v.need_grad) == (expected is not None), f"input {i}"
        if (row["case"], i) in NNABLA_NAN_GRADIENTS:
            # README "Deliberate differences"; test_deliberate_differences.py checks ours.
            assert np.isnan(expected).all() and np.isfinite(v.g).all()
        elif expected is not None:
            np.testing.assert_allclose(v.g, expected, rtol=1e-5, atol=1e-6,
                                       err_msg=f"gradient of input {i}")
    for i, (v, expected) in enumerate(zip(flat, row["inputs_after"])):
        if expected is not None:
            np.testing.assert_allclose(v.d, expected, rtol=1e-6, atol=1e-7,
                                       err_msg=f"input {i} after the call (in-place updates)")


def test_every_differentiable_function_has_an_independent_gradient_check():
    # Central differences (a Case with grad) or nnabla's recorded gradients; the engine
    # against the kernel and nn.grad against the engine compare the code with itself.
    by_differences = {c.name for c in ALL_CASES if c.grad}
    by_nnabla = {CASES_BY_ID[r["case"]].name for r in RECORDED["convention_gradients"]}
    missing = [name for name, spec in SPECS.items()
               if spec.differentiable and name not in by_differences | by_nnabla]
    assert missing == []


def test_every_deterministic_function_has_an_independent_forward_reference():
    # Random generators are checked by their distributions in test_stochastic.py.
    with_reference = {c.name for c in ALL_CASES if c.ref is not None}
    missing = [name for name, spec in SPECS.items()
               if name not in with_reference and not spec.stochastic]
    assert missing == []
