"""NnpNetworkPass edits as nnabla.models uses them; load() info with optimizers; parameter
files in every format."""
import io

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.utils.load import load
from nnabla.utils.nnp_graph import NnpLoader, NnpNetworkPass
from nnabla.utils.save import save


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _saved_model():
    x = nn.Variable((2, 3, 4, 4))
    h = F.dropout(x, 0.5)
    h = PF.convolution(h, 2, (3, 3), pad=(1, 1), name="conv")
    h = PF.batch_normalization(h, name="bn")
    feature = F.relu(h)
    y = PF.affine(F.average_pooling(feature, (2, 2)), 3, name="fc")
    buffer = io.BytesIO()
    save(buffer, {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                                "names": {"x": x, "feature": feature}}]}, extension=".nnp")
    buffer.seek(0)
    return buffer


def test_network_pass_replaces_input_bypasses_dropout_freezes_and_stops_early():
    loader = NnpLoader(_saved_model(), extension=".nnp")
    x = nn.Variable.from_numpy_array(np.random.RandomState(0).randn(5, 3, 4, 4))
    callback = NnpNetworkPass()
    callback.set_variable("x", x)
    callback.remove_and_rewire("Dropout")
    callback.set_batch_normalization_batch_stat_all(False)
    callback.fix_parameters()
    callback.use_up_to("feature")
    net = loader.get_network("net", batch_size=5, callback=callback)
    assert list(net.outputs) == ["feature"]
    out = net.outputs["feature"]
    out.forward()
    p = nn.get_parameters(grad_only=False)
    conv = F.convolution(x, p["conv/conv/W"], p["conv/conv/b"], pad=(1, 1))
    expected = F.relu(F.batch_normalization(conv, p["bn/bn/beta"], p["bn/bn/gamma"],
                                            p["bn/bn/mean"], p["bn/bn/var"], batch_stat=False))
    expected.forward()
    np.testing.assert_allclose(out.d, expected.d, rtol=1e-6)
    assert not any(v.need_grad for k, v in net.variables.items()
                   if "/" in k and v is not None)


def test_force_average_pooling_global_and_drop_function():
    loader = NnpLoader(_saved_model(), extension=".nnp")
    callback = NnpNetworkPass()
    callback.force_average_pooling_global("AveragePooling")
    callback.use_up_to("AveragePooling_out")     # the classifier expects the 2x2 pooling
    net = loader.get_network("net", callback=callback)
    pool = net.variables["AveragePooling_out"]
    assert pool.shape == (2, 2, 1, 1)
    checking = NnpNetworkPass()
    checking.check_average_pooling_global("AveragePooling")
    with pytest.raises(ValueError, match="not for global pooling"):
        loader.get_network("net", callback=checking)


def test_load_links_optimizer_monitor_and_executor(tmp_path):
    x = nn.Variable((4, 3))
    t = nn.Variable((4, 1))
    loss = F.mean(F.squared_error(PF.affine(x, 1, name="fc"), t))
    solver = S.Adam(0.01)
    solver.set_parameters(nn.get_parameters())
    contents = {
        "global_config": {"default_context": nn.get_current_context()},
        "training_config": {"max_epoch": 3, "iter_per_epoch": 5, "save_best": True},
        "networks": [{"name": "train", "batch_size": 4, "outputs": {"loss": loss},
                      "names": {"x": x, "t": t}}],
        "datasets": [{"name": "data", "uri": "data.csv", "variables": ["x", "t"],
                      "shuffle": True, "batch_size": 4, "no_image_normalization": True}],
        "optimizers": [{"name": "opt", "solver": solver, "network": "train",
                        "dataset": "data", "weight_decay": 0, "lr_decay": 1,
                        "lr_decay_interval": 1, "update_interval": 1}],
        "monitors": [{"name": "mon", "network": "train", "dataset": "data"}],
        "executors": [{"name": "run", "network": "train", "data": ["x", "t"],
                       "output": ["loss"]}]}
    path = str(tmp_path / "train.nnp")
    save(path, contents)
    nn.clear_parameters()
    info = load(path, prepare_data_iterator=False)
    assert info.training_config.max_epoch == 3
    optimizer = info.optimizers["opt"]
    assert optimizer.solver.name == "Adam" and optimizer.solver.info["alpha"] == pytest.approx(0.01)
    assert sorted(optimizer.parameters) == ["fc/affine/W", "fc/affine/b"]
    assert optimizer.target is optimizer.loss_variables[0].variable_instance
    assert info.monitors["mon"].network is info.networks["train"]
    assert [v.name for v in info.executors["run"].dataset_assign] == ["x", "t"]


@pytest.mark.parametrize("ext", [".h5", ".protobuf", ".nntxt", ".nnp"])
def test_parameters_round_trip_in_every_format(tmp_path, ext):
    PF.affine(nn.Variable((2, 3)), 4, name="fc")
    nn.get_parameters()["fc/affine/b"].need_grad = False
    saved = {k: (v.d.copy(), v.need_grad) for k, v in nn.get_parameters(grad_only=False).items()}
    nn.save_parameters(str(tmp_path / f"p{ext}"))
    nn.clear_parameters()
    nn.load_parameters(str(tmp_path / f"p{ext}"))
    loaded = nn.get_parameters(grad_only=False)
    assert list(loaded) == list(saved)
    for k, (values, need_grad) in saved.items():
        np.testing.assert_array_equal(loaded[k].d, values)
        assert loaded[k].need_grad == need_grad
