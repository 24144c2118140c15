"""nnabla.experimental.parametric_function_class: each class computes what the matching
nnabla.parametric_functions call computes with the same parameter values, and the
Module helpers name, save and load parameters as nnabla does."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.parametric_functions as PF
from nnabla.experimental import parametric_function_classes
from nnabla.experimental.parametric_function_class.affine import Affine, Linear
from nnabla.experimental.parametric_function_class.batch_normalization import (
    BatchNorm1d, BatchNorm2d, BatchNorm3d, BatchNormalization)
from nnabla.experimental.parametric_function_class.convolution import Conv2d, Convolution
from nnabla.experimental.parametric_function_class.deconvolution import Deconvolution
from nnabla.experimental.parametric_function_class.embed import Embed
from nnabla.experimental.parametric_function_class.module import Module


@pytest.fixture(autouse=True)
def clean_scope():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _pf_output(pf_call, params, x):
    """Run ``pf_call`` in a scope whose parameters are set to ``params``."""
    with nn.parameter_scope("ref"):
        y = pf_call(x)
    scope = nn.get_parameters(grad_only=False)
    for name, value in params.items():
        scope[f"ref/{name}"].d = value.d
    y.forward()
    return y.d.copy()


def test_affine_matches_pf_affine_and_numpy():
    rng = np.random.RandomState(0)
    x = nn.Variable.from_numpy_array(rng.randn(2, 3, 4))
    fc = Affine(12, (2, 3), rng=rng)
    fc.b.d = rng.randn(6)
    y = fc(x)
    y.forward()
    np.testing.assert_allclose(y.d, x.d.reshape(2, 12) @ fc.W.d + fc.b.d, rtol=1e-5)
    ref = _pf_output(lambda v: PF.affine(v, 6), {"affine/W": fc.W, "affine/b": fc.b}, x)
    np.testing.assert_allclose(y.d, ref, rtol=1e-6)
    assert Linear is Affine
    assert fc.W.need_grad and Affine(3, 2, fix_parameters=True).W.need_grad is False
    assert Affine(3, 2, with_bias=False).b is None
    assert not nn.get_parameters(grad_only=False).keys() - {"ref/affine/W", "ref/affine/b"}


def test_default_initializer_draws_within_glorot_limit():
    lim = np.sqrt(6.0 / (50 + 30))
    w = Affine(50, 30, rng=np.random.RandomState(1)).W.d
    assert np.abs(w).max() <= lim and np.abs(w).max() > 0.9 * lim
    w = Convolution(4, 6, (3, 3), rng=np.random.RandomState(1)).W.d
    lim = np.sqrt(6.0 / (4 * 9 + 6 * 9))
    assert w.shape == (6, 4, 3, 3) and np.abs(w).max() <= lim


def test_convolution_matches_pf_convolution():
    rng = np.random.RandomState(2)
    x = nn.Variable.from_numpy_array(rng.randn(2, 4, 7, 7))
    conv = Conv2d(4, 6, (3, 3), pad=(1, 1), stride=(2, 2), dilation=(1, 1), group=2,
                  b_init=rng.randn(6))
    assert conv.W.shape == (6, 2, 3, 3)
    y = conv(x)
    y.forward()
    ref = _pf_output(lambda v: PF.convolution(v, 6, (3, 3), pad=(1, 1), stride=(2, 2),
                                              group=2),
                     {"conv/W": conv.W, "conv/b": conv.b}, x)
    np.testing.assert_allclose(y.d, ref, rtol=1e-5, atol=1e-6)
    assert y.shape == (2, 6, 4, 4)


def test_deconvolution_matches_pf_deconvolution_with_different_channel_counts():
    rng = np.random.RandomState(3)
    x = nn.Variable.from_numpy_array(rng.randn(2, 4, 5, 5))
    deconv = Deconvolution(4, 6, (3, 3), stride=(2, 2), b_init=rng.randn(6))
    assert deconv.W.shape == (4, 6, 3, 3)
    y = deconv(x)
    y.forward()
    ref = _pf_output(lambda v: PF.deconvolution(v, 6, (3, 3), stride=(2, 2)),
                     {"deconv/W": deconv.W, "deconv/b": deconv.b}, x)
    np.testing.assert_allclose(y.d, ref, rtol=1e-5, atol=1e-6)
    assert y.shape == (2, 6, 11, 11)


@pytest.mark.parametrize("cls, shape", [(BatchNorm1d, (4, 3, 5)), (BatchNorm2d, (4, 3, 2, 2)),
                                        (BatchNorm3d, (4, 3, 2, 2, 2))])
def test_batch_norm_training_and_test_match_numpy(cls, shape):
    rng = np.random.RandomState(4)
    xd = rng.randn(*shape) * 3 + 1
    x = nn.Variable.from_numpy_array(xd)
    bn = cls(3, eps=1e-3, param_init={"gamma": np.full([1, 3] + [1] * (len(shape) - 2), 2.0)})
    assert not bn.mean.need_grad and not bn.var.need_grad and bn.gamma.need_grad
    y = bn(x)
    y.forward()
    axes = (0,) + tuple(range(2, len(shape)))
    mean, var = xd.mean(axes, keepdims=True), xd.var(axes, keepdims=True)
    np.testing.assert_allclose(y.d, 2 * (xd - mean) / np.sqrt(var + 1e-3), rtol=1e-4,
                               atol=1e-5)
    # running statistics moved by decay 0.9 (variance unbiased, as nnabla)
    n = xd.size // 3
    np.testing.assert_allclose(bn.mean.d, 0.1 * mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bn.var.d, 0.9 + 0.1 * var * n / (n - 1), rtol=1e-4)
    yt = bn(x, test=True)
    yt.forward()
    np.testing.assert_allclose(yt.d, 2 * (xd - bn.mean.d) / np.sqrt(bn.var.d + 1e-3),
                               rtol=1e-4, atol=1e-5)


def test_batch_normalization_checks_its_arguments():
    with pytest.raises(ValueError, match="one axis"):
        BatchNormalization(3, 4, axes=[1, 2])
    with pytest.raises(ValueError, match="param_init keys"):
        BatchNormalization(3, 4, param_init={"scale": 1})
    with pytest.raises(ValueError, match=r"shape \(3,\); expected \(1, 3, 1, 1\)"):
        BatchNormalization(3, 4, param_init={"beta": np.zeros(3)})


def test_embed_matches_indexing():
    emb = Embed(10, 4)
    assert emb.W.shape == (10, 4) and np.abs(emb.W.d).max() <= np.sqrt(3)
    idx = np.array([[1, 9, 0], [3, 3, 2]])
    y = emb(nn.Variable.from_numpy_array(idx))
    y.forward()
    np.testing.assert_array_equal(y.d, emb.W.d[idx])


class _Net(Module):
    def __init__(self):
        self.conv = Convolution(3, 4, (3, 3), pad=(1, 1))
        self.bn = BatchNorm2d(4)
        self.fc = Affine(4 * 5 * 5, 2)
        self.shared = self.fc   # visited once
        self.scale = nn.Variable.from_numpy_array(np.ones((1, 1))).apply(need_grad=True)

    def __call__(self, x):
        return self.fc(self.bn(self.conv(x))) * self.scale


def test_module_names_its_parameters_and_round_trips_them(tmp_path):
    net = _Net()
    names = list(net.get_parameters(grad_only=False))
    assert names == ["/scale", "conv/W", "conv/b", "bn/beta", "bn/gamma", "bn/mean", "bn/var",
                     "fc/W", "fc/b"]
    assert "bn/mean" not in net.get_parameters()
    assert list(Affine(2, 3).get_parameters()) == ["/W", "/b"]
    x = nn.Variable.from_numpy_array(np.random.RandomState(5).randn(2, 3, 5, 5))
    y = net(x)
    y.forward()
    expected = y.d.copy()
    path = str(tmp_path / "net.h5")
    net.save_parameters(path)
    other = _Net()
    other.load_parameters(path)
    y2 = other(x)
    y2.forward()
    np.testing.assert_allclose(y2.d, expected, rtol=1e-6)
    assert not nn.get_parameters(grad_only=False)   # the file's values were taken out
    Affine(2, 3).save_parameters(str(tmp_path / "small.h5"))
    with pytest.raises(ValueError, match="has no parameter '/scale'"):
        _Net().load_parameters(str(tmp_path / "small.h5"))


def test_legacy_module_name_reexports_the_classes():
    assert parametric_function_classes.Convolution is Convolution
