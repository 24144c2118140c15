"""QuantizeNonQNNToRecordingModifier and QuantizeRecordingToTrainingModifier: graph structure
and values against numpy formulas, and whole scenarios against nnabla 1.39 (recorded by
tools/record_qnn_reference.py into tests/data/qnn/reference.json)."""
import json
import os
import sys

import numpy as np
import pytest

import nnabla as nn
import nnabla.experimental.graph_converters as GC
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla.utils import qnn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from qnn_cases import CASES, run_case  # noqa: E402

REFERENCE = os.path.join(HERE, "..", "data", "qnn", "reference.json")


@pytest.fixture(autouse=True)
def fresh_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _types(y):
    names = []
    y.visit(lambda f: names.append(f.info.type_name))
    return names


def _config(**kw):
    cfg = qnn.QATConfig()
    cfg.skip_inputs_layers = []
    cfg.skip_outputs_layers = []
    for k, v in kw.items():
        setattr(cfg, k, v)
    return cfg


def _ranks(y):
    r = qnn.FunctionsRankRecorder()
    y.visit(r)
    return r.functions_ranks


def _to_recording(y, cfg, training=True):
    return GC.GraphConverter([GC.QuantizeNonQNNToRecordingModifier(
        _ranks(y), config=cfg, training=training)]).convert(y)


def _to_training(rec, cfg):
    removed = GC.GraphConverter([GC.RemoveFunctionModifier(
        rm_funcs=[cfg.recorder_activation().name(), cfg.recorder_weight().name()])]).convert(rec)
    return GC.GraphConverter([GC.QuantizeRecordingToTrainingModifier(
        _ranks(removed), config=cfg)]).convert(removed)


def _q(v, s, narrow=False):
    """nnabla's QuantizeLinear then DequantizeLinear (zero point 0, half to even)."""
    low = -127 if narrow else -128
    return np.clip(np.rint(v / s), low, 127) * s


def _pow2(s):
    return 2.0 ** np.round(np.log(s) / np.log(2))


def test_affine_recording_structure_and_statistics():
    rng = np.random.RandomState(0)
    x = nn.Variable((4, 6))
    y = PF.affine(x, 3, name="fc")
    w, b = nn.get_parameters()["fc/affine/W"], nn.get_parameters()["fc/affine/b"]
    w.d = rng.normal(size=w.shape)
    b.d = rng.normal(size=b.shape)
    cfg = _config()
    rec = _to_recording(y, cfg)
    assert _types(rec) == ["MaxMvaRecorder", "MinMaxMinMaxRecorder", "MinMaxMinMaxRecorder",
                           "Affine"]
    batches = [rng.uniform(-1, 2, x.shape) for _ in range(3)]
    for d in batches:
        x.d = d
        rec.forward()
        np.testing.assert_allclose(rec.d, d.astype(np.float32) @ w.d + b.d, rtol=1e-5,
                                   atol=1e-6)
    params = nn.get_parameters(grad_only=False)
    M = 0.0
    for d in batches:
        M = 0.99 * M + 0.01 * d.astype(np.float32).max()
    np.testing.assert_allclose(params["Affine-0/M-x0"].d, [[M]], rtol=1e-6)
    np.testing.assert_allclose(params["Affine-0/m-w0"].d, [[min(0, w.d.min())]], rtol=1e-6)
    np.testing.assert_allclose(params["Affine-0/M-w0"].d, [[max(0, w.d.max())]], rtol=1e-6)
    np.testing.assert_allclose(params["Affine-0/M-w1"].d, [max(0, b.d.max())], rtol=1e-6)
    assert params["Affine-0/M-w1"].shape == (1,)

    # training graph: the input, weight and bias quantized and dequantized; output float
    train = _to_training(rec, cfg)
    assert sorted(_types(train)) == sorted(
        ["QuantizeLinear", "DequantizeLinear"] * 3 + ["Affine"])
    x.d = batches[0]
    train.forward()
    sx = _pow2(2 * M / 255)
    sw = _pow2(max(max(0, w.d.max()) - min(0, w.d.min()), 1e-24) / 255)
    expected = _q(batches[0].astype(np.float32), sx) @ _q(w.d, sw) + _q(b.d, sx * sw)
    np.testing.assert_allclose(train.d, expected, rtol=1e-5, atol=1e-6)
    params = nn.get_parameters(grad_only=False)
    np.testing.assert_allclose(params["Affine-0/scale-b"].d, [sx * sw], rtol=1e-6)
    assert params["Affine-0/zeropoint-b"].d.dtype == np.int8


def test_skip_bias_and_narrow_range_and_not_rounded():
    rng = np.random.RandomState(1)
    x = nn.Variable.from_numpy_array(rng.uniform(-1, 2, (4, 6)))
    y = PF.affine(x, 3, name="fc")
    w, b = nn.get_parameters()["fc/affine/W"], nn.get_parameters()["fc/affine/b"]
    b.d = rng.normal(size=b.shape)
    cfg = _config(skip_bias=True, narrow_range=True,
                  pow2=qnn.QATConfig.RoundingMethod.NOTROUND,
                  recorder_activation=qnn.AbsMaxRecorderCallback)
    rec = _to_recording(y, cfg)
    rec.forward()
    train = _to_training(rec, cfg)
    assert sorted(_types(train)) == sorted(
        ["QuantizeLinear", "DequantizeLinear"] * 2 + ["Affine"])
    train.forward()
    sx = 2 * np.abs(x.d).max() / 254
    sw = (max(0, w.d.max()) - min(0, w.d.min())) / 254
    expected = _q(x.d, sx, True) @ _q(w.d, sw, True) + b.d
    np.testing.assert_allclose(train.d, expected, rtol=1e-5, atol=1e-6)


def _block(x):
    with nn.parameter_scope("c1"):
        h = F.relu(PF.convolution(x, 2, (3, 3), pad=(1, 1)))
    with nn.parameter_scope("c2"):
        r = PF.convolution(h, 2, (3, 3), pad=(1, 1))
    return h + r


def test_add2_inputs_share_the_lowest_ranked_statistics():
    x = nn.Variable.from_numpy_array(np.random.RandomState(2).uniform(-1, 1, (1, 1, 5, 5)))
    y = _block(x)
    cfg = _config()
    rec = _to_recording(y, cfg)
    add = rec.parent
    assert add.info.type_name == "Add2"
    # both inputs recorded by the statistics of the ReLU output (lower rank than the conv)
    shared = [i.parent.inputs[1] for i in add.inputs]
    assert all(i.parent.info.type_name == "MaxMvaRecorder" for i in add.inputs)
    np.testing.assert_array_equal(shared[0].d, shared[1].d)
    rec.forward()
    params = nn.get_parameters(grad_only=False)
    assert shared[0].d.item() == params["Convolution-2/M-x0"].d.item() != 0

    train = _to_training(rec, cfg)
    add = train.parent
    assert add.info.type_name == "Add2"
    dq = [i.parent for i in add.inputs]
    assert [f.info.type_name for f in dq] == ["DequantizeLinear"] * 2
    assert dq[0].inputs[1].d.item() == dq[1].inputs[1].d.item()
    # the ReLU output is quantized with the scale recorded at the input of the second
    # convolution, the convolution output requantized with it
    np.testing.assert_allclose(dq[0].inputs[1].d, _pow2(2 * shared[0].d / 255), rtol=1e-6)
    train.forward()
    assert np.isfinite(train.d).all()


def test_record_layers_skip_layers_and_both_position():
    x = nn.Variable((2, 1, 6, 6))
    with nn.parameter_scope("a"):
        h = PF.convolution(x, 2, (3, 3))
    with nn.parameter_scope("b"):
        h = PF.convolution(F.relu(h), 2, (3, 3))
    with nn.parameter_scope("c"):
        h = PF.affine(h, 4)
    with nn.parameter_scope("d"):
        y = PF.affine(F.relu(h), 3)

    def recorded(cfg):
        rec = _to_recording(y, cfg)
        return [(f.info.type_name, [i.parent.info.type_name if i.parent else None
                                    for i in f.inputs])
                for f in _functions(rec) if not f.info.type_name.endswith("Recorder")]

    A, W = "MaxMvaRecorder", "MinMaxMinMaxRecorder"
    # QATConfig's defaults: the first convolution and the last affine stay unrecorded
    # (these three structures are nnabla 1.39's for the same graph)
    got = recorded(qnn.QATConfig())
    assert got == [("Convolution", [None, None, None]), ("ReLU", [A]),
                   ("Convolution", [A, W, W]), ("Affine", [A, W, W]), ("ReLU", [A]),
                   ("Affine", ["ReLU", None, None])]
    # record_layers: only the ReLUs (their output feeds the next layer unrecorded)
    got = recorded(_config(record_layers=["ReLU"]))
    assert got == [("Convolution", [None, None, None]), ("ReLU", [A]),
                   ("Convolution", ["ReLU", None, None]), ("Affine", ["Convolution", None, None]),
                   ("ReLU", [A]), ("Affine", ["ReLU", None, None])]
    # BOTH: the output of a recorded function is recorded too
    got = recorded(_config(record_layers=["Affine"],
                           recorder_position=qnn.QATConfig.RecorderPosition.BOTH))
    assert got == [("Convolution", [None, None, None]), ("ReLU", ["Convolution"]),
                   ("Convolution", ["ReLU", None, None]), ("Affine", [A, W, W]),
                   ("ReLU", [A]), ("Affine", [A, W, W])]


def _functions(y):
    fs = []
    y.visit(fs.append)
    return fs


def test_not_training_recorders_keep_zero_statistics():
    x = nn.Variable.from_numpy_array(np.ones((2, 3)))
    y = PF.affine(x, 2, name="fc")
    rec = _to_recording(y, _config(), training=False)
    rec.forward()
    params = nn.get_parameters(grad_only=False)
    assert params["Affine-0/M-x0"].d.item() == 0


def test_bad_configuration_raises():
    with pytest.raises(ValueError, match="config"):
        GC.QuantizeNonQNNToRecordingModifier({})
    with pytest.raises(ValueError, match="config"):
        GC.QuantizeRecordingToTrainingModifier({})
    cfg = _config(precision_mode=qnn.PrecisionMode.QNN)
    with pytest.raises(ValueError, match="SIM_QNN"):
        GC.QuantizeRecordingToTrainingModifier({}, config=cfg)


def _reference():
    with open(REFERENCE) as f:
        return json.load(f)["cases"]


@pytest.mark.conformance
@pytest.mark.parametrize("name", sorted(CASES))
def test_scenario_matches_nnabla_139(name):
    ref = _reference()[name]
    got = run_case(nn, F, PF, GC, qnn, CASES[name])
    np.testing.assert_allclose(got["float_out"], ref["float_out"], rtol=1e-5, atol=1e-4)
    assert got["recording_types"] == ref["recording_types"]
    assert got["recorded_shapes"] == ref["recorded_shapes"]
    for key, values in ref["recorded"].items():
        np.testing.assert_allclose(got["recorded"][key], values, rtol=1e-5, atol=1e-6,
                                   err_msg=key)
    np.testing.assert_allclose(got["recording_out"], ref["recording_out"], rtol=1e-5,
                               atol=1e-4)
    assert got["training_types"] == ref["training_types"]
    assert got["training_param_shapes"] == ref["training_param_shapes"]
    for key, values in ref["training_params"].items():
        np.testing.assert_allclose(got["training_params"][key], values, rtol=1e-5,
                                   atol=1e-9, err_msg=key)
    np.testing.assert_allclose(got["training_out"], ref["training_out"], rtol=1e-4,
                               atol=1e-4)
