"""Tests of nnabla.experimental.graph_converters: each conversion keeps the outputs, checked
against the original graph (and numpy), and the graph-converters tutorial runs verbatim."""
import doctest
import importlib

import numpy as np
import pytest

import nnabla as nn
import nnabla.experimental.graph_converters as GC
import nnabla.functions as F
import nnabla.parametric_functions as PF


@pytest.fixture(autouse=True)
def fresh_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def randomize_parameters(rng):
    for name, p in nn.get_parameters(grad_only=False).items():
        if name.endswith("/var"):
            p.d = rng.uniform(0.5, 2.0, p.shape)
        else:
            p.d = rng.normal(0, 0.5, p.shape)


def small_resnet(x, channel_last=False, with_bias=False):
    """conv-bn-relu, a residual block, pooling, concatenation and an affine head."""
    axes = [3] if channel_last else [1]
    kw = dict(channel_last=channel_last, with_bias=with_bias)
    with nn.parameter_scope("c1"):
        h = PF.convolution(x, 8, (3, 3), pad=(1, 1), **kw)
        h = F.relu(PF.batch_normalization(h, axes=axes, batch_stat=False))
    with nn.parameter_scope("c2"):
        r = PF.convolution(h, 8, (3, 3), pad=(1, 1), **kw)
        r = PF.batch_normalization(r, axes=axes, batch_stat=False)
    h = F.relu(h + r)
    h = F.max_pooling(h, (2, 2), channel_last=channel_last)
    h = F.concatenate(h, F.average_pooling(h, (1, 1), channel_last=channel_last),
                      axis=3 if channel_last else 1)
    with nn.parameter_scope("fc"):
        return PF.affine(h, 5)


def types_of(y):
    names = []
    y.visit(lambda f: names.append(f.info.type_name))
    return names


@pytest.mark.parametrize("with_bias", [False, True])
def test_batch_normalization_folding_removes_bn_and_keeps_output(with_bias):
    rng = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3, 6, 6))
    y = small_resnet(x, with_bias=with_bias)
    randomize_parameters(rng)
    yy = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()]).convert(y)
    assert "BatchNormalization" not in types_of(yy)
    y.forward()
    yy.forward()
    np.testing.assert_allclose(yy.d, y.d, rtol=1e-4, atol=1e-4)


def test_opposite_folding_of_bn_before_convolution_matches_numpy():
    rng = np.random.RandomState(1)
    x = nn.Variable.from_numpy_array(rng.randn(2, 4, 5, 5))
    h = PF.batch_normalization(x, batch_stat=False, name="bn")
    y = PF.convolution(h, 3, (1, 1), name="conv")
    randomize_parameters(rng)
    y.forward()
    expected = y.d.copy()
    yy = GC.GraphConverter([GC.BatchNormalizationFoldingModifier(opposite=True)]).convert(y)
    assert "BatchNormalization" not in types_of(yy)
    yy.forward()
    np.testing.assert_allclose(yy.d, expected, rtol=1e-4, atol=1e-4)


def test_self_folding_is_scale_and_shift_of_bn_formula():
    rng = np.random.RandomState(2)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3, 4, 4))
    y = PF.batch_normalization(x, batch_stat=False, eps=1e-3)
    randomize_parameters(rng)
    p = {k.split("/")[-1]: v.d for k, v in nn.get_parameters(grad_only=False).items()}
    expected = (x.d - p["mean"]) / np.sqrt(p["var"] + 1e-3) * p["gamma"] + p["beta"]
    yy = GC.GraphConverter([GC.BatchNormalizationSelfFoldingModifier()]).convert(y)
    assert "BatchNormalization" not in types_of(yy)
    assert "bn-self-folding/c0-bn-self-folding-0" in nn.get_parameters(grad_only=False)
    yy.forward()
    np.testing.assert_allclose(yy.d, expected, rtol=1e-5, atol=1e-5)


def test_channel_last_gives_same_values_and_channel_first_inverts_it():
    rng = np.random.RandomState(3)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3, 6, 6))
    y = small_resnet(x)
    randomize_parameters(rng)
    y.forward()
    cl = GC.ChannelLastModifier([x])
    yy = GC.GraphConverter([cl]).convert(y)
    assert cl.inputs_cl[0].shape == (2, 6, 6, 3)
    np.testing.assert_array_equal(cl.inputs_cl[0].d, x.d.transpose(0, 2, 3, 1))
    yy.forward()
    np.testing.assert_allclose(yy.d, y.d, rtol=1e-4, atol=1e-4)
    cf = GC.ChannelFirstModifier(cl.inputs_cl)
    yyy = GC.GraphConverter([cf]).convert(yy)
    yyy.forward()
    np.testing.assert_allclose(yyy.d, y.d, rtol=1e-4, atol=1e-4)


def test_channel_last_intermediate_is_the_transpose():
    rng = np.random.RandomState(4)
    x = nn.Variable.from_numpy_array(rng.randn(1, 3, 5, 5))
    y = F.relu(PF.batch_normalization(PF.convolution(x, 4, (3, 3)), batch_stat=False))
    randomize_parameters(rng)
    given = nn.Variable.from_numpy_array(x.d.transpose(0, 2, 3, 1))
    yy = GC.GraphConverter([GC.ChannelLastModifier([x], inputs_cl=[given])]).convert(y)
    y.forward()
    yy.forward()
    np.testing.assert_allclose(yy.d, y.d.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5)


def test_batch_stat_test_mode_and_remove_function():
    rng = np.random.RandomState(5)
    x = nn.Variable.from_numpy_array(rng.randn(4, 3))
    y = F.dropout(PF.batch_normalization(x, batch_stat=True), 0.5)
    yy = GC.GraphConverter([GC.TestModeModifier(rm_funcs=["Dropout"])]).convert(y)
    assert types_of(yy) == ["BatchNormalization"]
    assert yy.parent.info.args["batch_stat"] is False
    yy.forward()
    np.testing.assert_allclose(yy.d, x.d / np.sqrt(1 + 1e-5), rtol=1e-5)


def test_no_grad_identity_and_pruning():
    rng = np.random.RandomState(6)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3))
    y = PF.affine(x, 4, name="fc")
    w = nn.get_parameters()["fc/affine/W"]
    w.d = np.array([[1, 0, 0.01, 0]] * 3) * np.array([[1], [1], [1]])
    yy = GC.GraphConverter([GC.NoGradModifier()]).convert(y)
    assert not any(v.need_grad for v in yy.parent.inputs[1:])
    x1 = nn.Variable.from_numpy_array(rng.randn(2, 3))
    y1 = GC.GraphConverter([GC.IdentityModifier({x: x1})]).convert(y)
    y1.forward()
    np.testing.assert_allclose(y1.d, x1.d @ w.d, rtol=1e-5, atol=1e-6)
    pruned = GC.GraphConverter([GC.PruningModifier(pruning_threshold=0.01)]).convert(y)
    kept = pruned.parent.inputs[1].d
    np.testing.assert_array_equal((np.abs(kept).sum(0) > 0), [True, False, False, False])


def test_fused_and_unfused_batch_normalization_round_trip_structure():
    x = nn.Variable((2, 3, 4, 4))
    z = nn.Variable((2, 3, 4, 4))
    y = F.relu(F.add2(PF.batch_normalization(x, name="bn"), z)) * 2
    fused = GC.GraphConverter([GC.FusedBatchNormalizationModifier()]).convert(y)
    assert "FusedBatchNormalization" in types_of(fused)
    assert "BatchNormalization" not in types_of(fused)
    unfused = GC.GraphConverter([GC.UnfusedBatchNormalizationModifier()]).convert(fused)
    assert {"BatchNormalization", "Add2", "ReLU"} <= set(types_of(unfused))


def test_unknown_modifier_is_rejected():
    with pytest.raises(TypeError, match="FunctionModifier"):
        GC.GraphConverter(["BatchNormalizationFolding"])


def test_unknown_modifier_targets_raise_naming_them():
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(2, 3, 4, 4))
    y = F.dropout(PF.batch_normalization(x), 0.5)
    for modifier in (GC.RemoveFunctionModifier(["Dropuot"]),
                     GC.TestModeModifier(rm_funcs=["Dropuot"])):
        with pytest.raises(ValueError, match="'Dropuot' \\(did you mean 'Dropout'\\?\\)"):
            GC.GraphConverter([modifier]).convert(y)
    # a real function type absent from the graph is left alone, as in nnabla
    yy = GC.GraphConverter([GC.RemoveFunctionModifier(["Tanh"])]).convert(y)
    assert types_of(yy) == ["BatchNormalization", "Dropout"]
    with pytest.raises(ValueError, match=r"'inputs'\[0\] is a variable of shape "
                                         r"\(2, 3, 5, 5\) that no function reads"):
        GC.ChannelLastModifier([nn.Variable((2, 3, 5, 5))])
    with pytest.raises(ValueError, match=r"'inputs'\[0\] is list"):
        GC.ChannelFirstModifier([[x]])


def test_add_bias_gives_a_zero_bias_next_to_a_batch_normalization():
    rng = np.random.RandomState(9)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3, 5, 5))
    y = PF.batch_normalization(PF.convolution(x, 4, (3, 3), with_bias=False, name="c"),
                               batch_stat=False)
    z = PF.affine(x, 2, with_bias=False, name="far")
    yy = GC.GraphConverter([GC.AddBiasModifier()]).convert(y)
    conv = yy.parent.inputs[0].parent
    assert conv.info.type_name == "Convolution" and len(conv.inputs) == 3
    assert nn.get_parameters()["c/conv/b"].shape == (4,)
    np.testing.assert_array_equal(conv.inputs[2].d, np.zeros(4))
    y.forward()
    yy.forward()
    np.testing.assert_allclose(yy.d, y.d, rtol=1e-6, atol=1e-6)
    zz = GC.GraphConverter([GC.AddBiasModifier()]).convert(z)
    assert len(zz.parent.inputs) == 2          # no batch normalization near: unchanged


def test_batch_norm_batch_stat_modifier_uses_the_running_statistics():
    rng = np.random.RandomState(4)
    x = nn.Variable.from_numpy_array(rng.randn(6, 3))
    y = PF.batch_normalization(x, batch_stat=True, name="bn")
    params = nn.get_parameters(grad_only=False)
    params["bn/bn/mean"].d = rng.randn(1, 3)
    params["bn/bn/var"].d = rng.uniform(0.5, 2, (1, 3))
    yy = GC.GraphConverter([GC.BatchNormBatchStatModifier()]).convert(y)
    assert yy.parent.info.args["batch_stat"] is False
    yy.forward()
    ref = (x.d - params["bn/bn/mean"].d) / np.sqrt(params["bn/bn/var"].d + 1e-5)
    np.testing.assert_allclose(yy.d, ref, rtol=1e-5, atol=1e-6)


def test_docstring_examples_run():
    for name in ("graph_converter", "batch_normalization_folding", "channel_last",
                 "channel_first", "batch_normalization_self_folding", "identity", "no_grad",
                 "remove_function", "batch_norm_batchstat", "test_mode"):
        module = importlib.import_module(f"nnabla.experimental.graph_converters.{name}")
        assert doctest.testmod(module).failed == 0, name


TUTORIAL = '''
# ResNet-50 for inference
import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import numpy as np
from nnabla.utils.inspection import pprint
from nnabla.models.imagenet import ResNet50

model = ResNet50()

batch_size = 1
x = nn.Variable((batch_size,) + model.input_shape)
y = model(x, training=False)

import nnabla.experimental.graph_converters as GC

modifiers = [GC.BatchNormalizationFoldingModifier()]
gc = GC.GraphConverter(modifiers)
yy = gc.convert(y)

import nnabla.experimental.graph_converters as GC

modifiers = [GC.ChannelLastModifier([x])]
gc = GC.GraphConverter(modifiers)
yy = gc.convert(y)

x_cl = modifiers[0].inputs_cl[0]
'''


def test_graph_converters_tutorial_runs_verbatim_without_download(monkeypatch, tmp_path):
    monkeypatch.setenv("NNABLA_MODELS_PRETRAINED", "0")
    monkeypatch.setenv("HOME", str(tmp_path))
    scope = {}
    exec(compile(TUTORIAL, "tutorial-graph-converters", "exec"), scope)
    assert scope["x_cl"].shape == (1, 224, 224, 3)
    assert scope["yy"].shape == (1, 1000)
    folded = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()]).convert(scope["y"])
    assert "BatchNormalization" not in types_of(folded)
    assert not (tmp_path / "nnabla_data" / "nnp_models" / "imagenet").exists()


def test_tutorial_resnet50_conversions_keep_the_output(monkeypatch, tmp_path):
    """The tutorial's ResNet-50 (pretrained=False, batch-norm statistics drawn at random):
    BN folding, self-folding and ChannelLast then ChannelFirst (through ``inputs_cl``) all
    give the float network's output. (Built here rather than by running the tutorial: the
    folded parameters ``w-folded``/``b-folded`` are got-or-created, as in nnabla, so a
    second folding after changing the statistics would reuse the first one's.)"""
    from nnabla.models.imagenet import ResNet50
    monkeypatch.setenv("NNABLA_MODELS_PRETRAINED", "0")
    monkeypatch.setenv("HOME", str(tmp_path))
    model = ResNet50()
    x = nn.Variable((1, 3, 64, 64))          # smaller than 224 x 224, to keep the test quick
    y = model(x, training=False, force_global_pooling=True)
    rng = np.random.RandomState(11)
    for name, p in nn.get_parameters(grad_only=False).items():
        if name.endswith(("/mean", "/beta")):
            p.d = rng.normal(0, 0.1, p.shape)
        elif name.endswith(("/var", "/gamma")):
            p.d = rng.uniform(0.5, 1.5, p.shape)
    x.d = rng.rand(*x.shape)
    y.forward()
    tol = dict(rtol=1e-3, atol=1e-4 * np.abs(y.d).max())
    folded = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()]).convert(y)
    assert "BatchNormalization" not in types_of(folded)
    self_folded = GC.GraphConverter([GC.BatchNormalizationSelfFoldingModifier()]).convert(y)
    assert "BatchNormalization" not in types_of(self_folded)
    cl = GC.ChannelLastModifier([x])
    y_cl = GC.GraphConverter([cl]).convert(y)
    y_cf = GC.GraphConverter([GC.ChannelFirstModifier(cl.inputs_cl)]).convert(y_cl)
    for what, out in (("folded", folded), ("self-folded", self_folded),
                      ("channel-last", y_cl), ("channel-first", y_cf)):
        out.forward()
        np.testing.assert_allclose(out.d, y.d, err_msg=what, **tol)


def test_folded_and_channel_last_resnet18_keep_the_output():
    from nnabla.models.imagenet import ResNet18
    rng = np.random.RandomState(7)
    model = ResNet18(pretrained=False)
    x = nn.Variable.from_numpy_array(rng.rand(1, 3, 64, 64))
    y = model(x, force_global_pooling=True)
    randomize_parameters(rng)
    y.forward()
    yy = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()]).convert(y)
    yy.forward()
    np.testing.assert_allclose(yy.d, y.d, rtol=1e-3, atol=1e-3 * np.abs(y.d).max())
    cl = GC.ChannelLastModifier([x])
    yc = GC.GraphConverter([cl]).convert(y)
    yc.forward()
    np.testing.assert_allclose(yc.d, y.d, rtol=1e-3, atol=1e-3 * np.abs(y.d).max())
