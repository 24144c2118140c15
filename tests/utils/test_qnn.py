"""nnabla.utils.qnn: recorders, scales, configuration and the QAT scheduler, against numpy
formulas (the conversions themselves: tests/experimental/test_quantize_converters.py)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.utils import qnn


@pytest.fixture(autouse=True)
def fresh_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _batches(seed=3, n=3, shape=(2, 5)):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-2, 3, shape).astype(np.float32) for _ in range(n)]


def _expected_stats(kind, batches, decay=0.99):
    """The recorders' statistics after ``batches``, by numpy (both start at 0)."""
    m = M = 0.0
    for b in batches:
        if kind == "MinMaxMinMax":
            m, M = min(m, b.min()), max(M, b.max())
        elif kind == "AbsMax":
            M = max(M, np.abs(b).max())
        elif kind == "MaxMax":
            M = max(M, b.max())
        elif kind == "MinMaxMva":
            m = decay * m + (1 - decay) * b.min()
            M = decay * M + (1 - decay) * b.max()
        elif kind == "MaxMva":
            M = decay * M + (1 - decay) * b.max()
    return m, M


KINDS = ["MinMaxMinMax", "AbsMax", "MaxMax", "MinMaxMva", "MaxMva"]


@pytest.mark.parametrize("kind", KINDS)
def test_recorder_is_identity_and_updates_its_statistics(kind):
    batches = _batches()
    x = nn.Variable(batches[0].shape)
    callback = getattr(qnn, f"{kind}RecorderCallback")()
    assert callback.name() == f"{kind}Recorder"
    with nn.parameter_scope("s"):
        y = callback(x, name="x0")
    assert y.parent.info.type_name == f"{kind}Recorder"
    for b in batches:
        x.d = b
        y.forward()
        np.testing.assert_array_equal(y.d, b)
    params = nn.get_parameters(grad_only=False)
    m, M = _expected_stats(kind, batches)
    np.testing.assert_allclose(params["s/M-x0"].d, [[M]], rtol=1e-6)
    assert params["s/M-x0"].shape == (1, 1)
    if "MinMax" in kind:
        np.testing.assert_allclose(params["s/m-x0"].d, [[m]], rtol=1e-6, atol=1e-7)
    else:
        assert "s/m-x0" not in params


@pytest.mark.parametrize("kind", KINDS)
def test_recorder_not_training_keeps_statistics(kind):
    x = nn.Variable.from_numpy_array(_batches()[0])
    with nn.parameter_scope("s"):
        y = getattr(qnn, f"{kind}RecorderCallback")()(x, training=False, name="a")
    y.forward()
    for p in nn.get_parameters(grad_only=False).values():
        np.testing.assert_array_equal(p.d, 0)


def test_recorder_functions_take_the_decay():
    b = _batches(n=1)[0]
    x = nn.Variable.from_numpy_array(b)
    M = nn.Variable.from_numpy_array(np.full((1, 1), 2.0, np.float32))
    m = nn.Variable.from_numpy_array(np.full((1, 1), -1.0, np.float32))
    qnn.max_mva_recorder(x, M, decay=0.5).forward()
    np.testing.assert_allclose(M.d, 0.5 * 2.0 + 0.5 * b.max(), rtol=1e-6)
    qnn.minmax_mva_recorder(x, m, M, decay=0.0).forward()
    np.testing.assert_allclose([m.d.item(), M.d.item()], [b.min(), b.max()], rtol=1e-6)
    qnn.minmax_minmax_recorder(x, m, M, training=False).forward()
    qnn.abs_max_recorder(x, M).forward()
    np.testing.assert_allclose(M.d, np.abs(b).max(), rtol=1e-6)
    qnn.max_max_recorder(x, M).forward()
    np.testing.assert_allclose(M.d, np.abs(b).max(), rtol=1e-6)


def test_recorder_passes_the_gradient_straight_through():
    b = _batches(n=1)[0]
    w = nn.Variable.from_numpy_array(b, need_grad=True)
    with nn.parameter_scope("s"):
        y = qnn.MinMaxMinMaxRecorderCallback()(w, name="w0")
    loss = F.sum(y * y)
    w.g = 1.0
    loss.forward()
    loss.backward()                     # accumulates into w.g
    np.testing.assert_allclose(w.g, 1.0 + 2 * b, rtol=1e-6)


def test_recorder_rejects_bad_statistics():
    x = nn.Variable((2, 3))
    with pytest.raises(ValueError, match="MaxMvaRecorder.*'M'.*\\(1, 1\\)"):
        qnn.max_mva_recorder(x, nn.Variable((1, 3)))
    with pytest.raises(ValueError, match="takes 3 inputs"):
        qnn.MinMaxMinMaxRecorder(nn.get_current_context())(x, nn.Variable((1, 1)))


def _pow2(scale, rounding):
    return 2.0 ** rounding(np.log2(scale))


@pytest.mark.parametrize("method, rounding", [("NOTROUND", None), ("ROUND", np.round),
                                              ("CEIL", np.ceil), ("FLOOR", np.floor)])
@pytest.mark.parametrize("narrow_range", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_scale_and_zero_point_formulas(kind, method, rounding, narrow_range):
    batches = _batches(seed=11)
    x = nn.Variable(batches[0].shape)
    cls = getattr(qnn, f"{kind}RecorderCallback")
    with nn.parameter_scope("s"):
        y = cls()(x, name="x1")
        for b in batches:
            x.d = b
            y.forward()
        scale, zp = cls.get_scale_zeropoint(x, narrow_range=narrow_range, round_method=method,
                                            name="x1")
    m, M = _expected_stats(kind, batches)
    levels = 254 if narrow_range else 255
    expected = max(M - m, 1e-24) / levels if "MinMax" in kind else 2 * M / levels
    if rounding is not None:
        expected = _pow2(expected, rounding)
    np.testing.assert_allclose(scale.d, [[expected]], rtol=1e-5)
    assert scale.shape == (1, 1) and not scale.need_grad
    assert zp.d.dtype == np.int8 and zp.d.item() == 0 and not zp.need_grad
    params = nn.get_parameters(grad_only=False)
    assert "s/scale-x1" in params and "s/zeropoint-x1" in params
    # an existing scale is returned unchanged, whatever the statistics became since
    x.d = batches[0] * 10
    with nn.parameter_scope("s"):
        y.forward()
        again, _ = cls.get_scale_zeropoint(x, narrow_range=narrow_range, round_method=method,
                                           name="x1")
    np.testing.assert_array_equal(again.d, scale.d)


def test_scale_without_recorder_is_none_and_bad_rounding_raises():
    x = nn.Variable((2, 3))
    with nn.parameter_scope("nothing"):
        assert qnn.MaxMvaRecorderCallback.get_scale_zeropoint(x, name="x0") == (None, None)
        assert qnn.MinMaxMinMaxRecorderCallback.get_scale_zeropoint(x, name="x0") == (None,
                                                                                     None)
        qnn.MaxMvaRecorderCallback()(x, name="x0")
        with pytest.raises(ValueError, match="round_method"):
            qnn.MaxMvaRecorderCallback.get_scale_zeropoint(x, round_method="ROUND_UP",
                                                           name="x0")
    # callable on an instance too
    with nn.parameter_scope("nothing"):
        s, _ = qnn.MaxMvaRecorderCallback().get_scale_zeropoint(x, name="x0")
    assert s.d.item() == 0.0    # nothing recorded yet: M is 0


def test_config_defaults_are_nnabla_139s():
    c = qnn.QATConfig()
    assert (c.ext_name, c.zero_point, c.dtype, c.precision_mode) == \
        ("cudnn", False, np.int8, qnn.PrecisionMode.SIM_QNN)
    assert (c.channel_last, c.channel_wise, c.niter_to_recording, c.niter_to_training) == \
        (False, False, 0, -1)
    assert c.pow2 is qnn.QATConfig.RoundingMethod.ROUND and c.pow2.value == "ROUND"
    assert (c.narrow_range, c.round_mode, c.bn_folding, c.bn_self_folding) == \
        (False, "HALF_TO_EVEN", False, False)
    assert c.recorder_weight is qnn.MinMaxMinMaxRecorderCallback
    assert c.recorder_activation is qnn.MaxMvaRecorderCallback
    assert c.record_layers == [] and c.recorder_position.value == 0
    assert c.skip_inputs_layers == ["Convolution", "Deconvolution"]
    assert c.skip_outputs_layers == ["Affine"]
    assert (c.learning_rate_scale, c.skip_bias) == (0.1, False)
    assert [m.value for m in qnn.QATConfig.RoundingMethod] == ["CEIL", "ROUND", "FLOOR",
                                                               "NOTROUND"]
    assert [m.value for m in qnn.PrecisionMode] == [0, 1, 2]
    assert [m.name for m in qnn.QNNState] == ["NON_QNN", "RECORDING", "TRAINING", "DEPLOYMENT"]
    t = qnn.qat_default_config
    assert isinstance(t, qnn.QATTensorRTConfig)
    assert (t.bn_folding, t.bn_self_folding) == (True, True)
    assert t.record_layers == ["Convolution", "Deconvolution", "Affine", "BatchMatmul", "ReLU"]
    assert t.record_position is qnn.QATConfig.RecorderPosition.BEFORE


def test_functions_rank_recorder_leaves_out_training_only_functions():
    x = nn.Variable((2, 3))
    y = F.relu(F.dropout(F.sin(x), 0.5))
    r = qnn.FunctionsRankRecorder()
    y.visit(r)
    assert [(f.info.type_name, k) for f, k in r.functions_ranks.items()] == \
        [("Sin", 0), ("ReLU", 1)]
    assert r.rank == 2


def test_scheduler_checks_its_iterations():
    cfg = qnn.QATConfig()
    with pytest.raises(ValueError, match="niter_to_training"):
        qnn.QATScheduler(cfg)               # niter_to_training unset (-1)
    cfg.niter_to_recording, cfg.niter_to_training = 5, 5
    with pytest.raises(ValueError, match="larger"):
        qnn.QATScheduler(cfg)


def _net(x, test):
    h = PF.convolution(x, 3, (3, 3), pad=(1, 1), name="conv")
    h = F.relu(PF.batch_normalization(h, batch_stat=not test, name="bn"))
    return PF.affine(h, 4, name="fc")


def test_scheduler_converts_trains_and_saves(tmp_path):
    cfg = qnn.QATConfig()
    cfg.ext_name = "cpu"
    cfg.bn_folding = True
    cfg.niter_to_recording, cfg.niter_to_training = 1, 3
    cfg.skip_inputs_layers, cfg.skip_outputs_layers = [], []
    rng = np.random.RandomState(0)
    x = nn.Variable((2, 2, 4, 4))
    t = nn.Variable((2, 1))
    pred = _net(x, test=True)           # folding needs inference-mode statistics
    vx = nn.Variable((1, 2, 4, 4))
    vpred = _net(vx, test=True)
    loss = F.mean(F.softmax_cross_entropy(pred, t))
    solver = S.Sgd(0.1)
    solver.set_parameters(nn.get_parameters(grad_only=True))
    sched = qnn.QATScheduler(config=cfg, solver=solver)
    sched(pred)
    sched(vpred, training=False)
    states = []
    for _ in range(5):
        sched.step()
        states.append(sched.state)
        x.d = rng.normal(size=x.shape)
        t.d = rng.randint(0, 4, size=t.shape)
        loss.forward()
        loss.backward()
        solver.update()
    assert states == [qnn.QNNState.NON_QNN, qnn.QNNState.RECORDING, qnn.QNNState.RECORDING,
                      qnn.QNNState.TRAINING, qnn.QNNState.TRAINING]
    np.testing.assert_allclose(solver.learning_rate(), 0.01)
    types = []
    pred.visit(lambda f: types.append(f.info.type_name))
    assert "BatchNormalization" not in types and "QuantizeLinear" in types
    assert not any(name.endswith("Recorder") for name in types)
    assert np.isfinite(loss.d).all()

    path = str(tmp_path / "qnn.nnp")
    sched.save(path, vx)
    from nnabla.utils.nnp_graph import NnpLoader
    net = NnpLoader(path).get_network("net", batch_size=1)
    vx.d = rng.normal(size=vx.shape)
    vpred.forward()
    inp = list(net.inputs.values())[0]
    out = list(net.outputs.values())[0]
    inp.d = vx.d
    out.forward()
    np.testing.assert_allclose(out.d, vpred.d, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="deploy"):
        sched.save(path, vx, deploy=True)
