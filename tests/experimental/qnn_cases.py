"""Quantization-aware-training scenarios run the same way on this package and on nnabla 1.39.

``tools/record_qnn_reference.py`` runs :func:`run_case` for every case in :data:`CASES`
under nnabla 1.39 and writes ``tests/data/qnn/reference.json``;
``tests/experimental/test_quantize_converters.py`` runs it here and compares. Only the
public nnabla API is used, so the module imports under either package.

A scenario: a small network (convolution, batch normalization, ReLU, pooling, a residual
Add2, a Concatenate, an affine head) with parameters drawn from a fixed generator; batch
normalizations folded; converted to the recording graph; three forward passes on fixed
batches (the recorders' statistics); recorders removed; converted to the quantized training
graph; one forward pass. It returns the function types of both graphs in visit order, the
parameters each conversion created (name, shape) and their values, and the output.
"""
import numpy as np

SHAPE = (2, 3, 8, 8)

# name -> QATConfig attributes (recorder callbacks and enums by name, resolved on the side
# that runs the case)
CASES = {
    "all_layers_before": dict(
        record_layers=[], skip_inputs_layers=[], skip_outputs_layers=[],
        recorder_position="BEFORE", recorder_activation="MaxMvaRecorderCallback",
        recorder_weight="MinMaxMinMaxRecorderCallback", pow2="ROUND"),
    "conv_affine_both_narrow": dict(
        record_layers=["Convolution", "Affine"], skip_inputs_layers=[],
        skip_outputs_layers=[], recorder_position="BOTH",
        recorder_activation="MinMaxMvaRecorderCallback",
        recorder_weight="AbsMaxRecorderCallback", pow2="NOTROUND", narrow_range=True),
    "default_skips_ceil": dict(
        recorder_activation="MaxMaxRecorderCallback", recorder_weight="MaxMaxRecorderCallback",
        pow2="CEIL", skip_bias=True),
    "tensorrt_floor": dict(
        base="QATTensorRTConfig", recorder_activation="MinMaxMinMaxRecorderCallback",
        pow2="FLOOR", skip_inputs_layers=[], skip_outputs_layers=[]),
}


def make_config(qnn, spec):
    """A QATConfig (or the named subclass) with the attributes of ``spec``."""
    spec = dict(spec)
    cfg = getattr(qnn, spec.pop("base", "QATConfig"))()
    cfg.bn_folding = True
    cfg.bn_self_folding = True
    cfg.channel_last = False
    for key, value in spec.items():
        if key in ("recorder_activation", "recorder_weight"):
            value = getattr(qnn, value)
        elif key == "recorder_position":
            value = qnn.QATConfig.RecorderPosition[value]
        elif key == "pow2":
            value = qnn.QATConfig.RoundingMethod[value]
        setattr(cfg, key, value)
    return cfg


def network(nn, F, PF, x):
    """The float network (batch normalizations in inference mode)."""
    with nn.parameter_scope("c1"):
        h = PF.convolution(x, 4, (3, 3), pad=(1, 1))
        h = F.relu(PF.batch_normalization(h, batch_stat=False))
    h = F.max_pooling(h, (2, 2))
    with nn.parameter_scope("c2"):
        r = PF.convolution(h, 4, (3, 3), pad=(1, 1))
        r = PF.batch_normalization(r, batch_stat=False)
    h = F.relu(h + r)
    with nn.parameter_scope("c3"):
        s = PF.convolution(h, 2, (1, 1))
    h = F.concatenate(h, F.relu(s), axis=1)
    h = F.average_pooling(h, (2, 2))
    with nn.parameter_scope("fc"):
        return PF.affine(h, 5)


def set_parameters(nn, rng):
    """Parameters from ``rng`` in sorted-name order (positive variances)."""
    for name, p in sorted(nn.get_parameters(grad_only=False).items()):
        if name.endswith("/var"):
            p.d = rng.uniform(0.5, 2.0, p.shape)
        elif name.endswith("/mean") or name.endswith("/beta"):
            p.d = rng.normal(0, 0.3, p.shape)
        elif name.endswith("/gamma"):
            p.d = rng.uniform(0.5, 1.5, p.shape)
        else:
            p.d = rng.normal(0, 0.4, p.shape)


def batches(seed=7):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1, 3, SHAPE).astype(np.float32) for _ in range(4)]


def function_types(y):
    names = []
    y.visit(lambda f: names.append(f.info.type_name))
    return names


def run_case(nn, F, PF, GC, qnn, spec, seed=0):
    """Run one scenario (see the module doc) and return its facts as plain data."""
    nn.clear_parameters()
    cfg = make_config(qnn, spec)
    data = batches()
    x = nn.Variable(SHAPE)
    y = network(nn, F, PF, x)
    set_parameters(nn, np.random.RandomState(seed))

    folded = GC.GraphConverter([
        GC.BatchNormalizationFoldingModifier(opposite=False, channel_last=False),
        GC.BatchNormalizationFoldingModifier(opposite=True, channel_last=False),
        GC.BatchNormalizationSelfFoldingModifier()]).convert(y)
    y.rewire_on(folded)
    before = set(nn.get_parameters(grad_only=False))
    x.d = data[0]
    y.forward()
    float_out = y.d.copy()

    ranks = qnn.FunctionsRankRecorder()
    y.visit(ranks)
    rec = GC.GraphConverter([GC.QuantizeNonQNNToRecordingModifier(
        ranks.functions_ranks, config=cfg)]).convert(y)
    recording_types = function_types(rec)
    for d in data[1:]:
        x.d = d
        rec.forward()
    recording_out = rec.d.copy()
    params = nn.get_parameters(grad_only=False)
    recorded = {k: params[k].d.ravel().tolist() for k in sorted(set(params) - before)}

    removed = GC.GraphConverter([GC.RemoveFunctionModifier(
        rm_funcs=[cfg.recorder_activation().name(), cfg.recorder_weight().name()])]).convert(rec)
    ranks = qnn.FunctionsRankRecorder()
    removed.visit(ranks)
    train = GC.GraphConverter([GC.QuantizeRecordingToTrainingModifier(
        ranks.functions_ranks, config=cfg)]).convert(removed)
    x.d = data[0]
    train.forward()
    params = nn.get_parameters(grad_only=False)
    created = sorted(set(params) - before - set(recorded))
    return {
        "float_out": float_out.ravel().tolist(),
        "recording_types": recording_types,
        "recording_out": recording_out.ravel().tolist(),
        "recorded": recorded,
        "recorded_shapes": {k: list(params[k].shape) for k in recorded},
        "training_types": function_types(train),
        "training_params": {k: params[k].d.ravel().tolist() for k in created},
        "training_param_shapes": {k: list(params[k].shape) for k in created},
        "training_out": train.d.ravel().tolist(),
    }
