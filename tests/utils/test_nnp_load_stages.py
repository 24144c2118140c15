"""nnabla.utils.load in nnabla's stages (base_load, link_components,
restore_optimizer_state), network passes with the loader's parameter scope, and NNP
arguments nnabla's kernels fill in."""
import io

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.utils import load as L
from nnabla.utils import nnabla_pb2
from nnabla.utils._nnp_functions import read_arguments
from nnabla.utils.nnp_graph import NnpLoader, NnpNetworkPass
from nnabla.utils.save import save


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _trained_model(path, state_format):
    rng = np.random.RandomState(0)
    x, t = nn.Variable((4, 3)), nn.Variable((4, 1))
    loss = F.mean(F.squared_error(PF.affine(x, 1, name="fc"), t))
    solver = S.Adam(0.01)
    solver.set_parameters(nn.get_parameters())
    for _ in range(3):
        x.d, t.d = rng.randn(4, 3), rng.randn(4, 1)
        loss.forward()
        solver.zero_grad()
        loss.backward()
        solver.update()
    contents = {
        "networks": [{"name": "net", "batch_size": 4, "outputs": {"loss": loss},
                      "names": {"x": x, "t": t}}],
        "optimizers": [{"name": "opt", "solver": solver, "network": "net",
                        "dataset": "data", "loss_variables": ["loss"]}],
    }
    save(str(path), contents, include_solver_state=True, solver_state_format=state_format)
    return {k: {n: a.d.copy() for n, a in s.pstate.items()}
            for k, s in solver.get_states().items()}


@pytest.mark.parametrize("state_format", [".h5", ".protobuf"])
def test_base_load_then_restore_gives_the_saved_solver_states(tmp_path, state_format):
    saved = _trained_model(tmp_path / "model.nnp", state_format)
    nn.clear_parameters()
    info = L.base_load(str(tmp_path / "model.nnp"))
    optimizer = info.optimizers["opt"]
    assert optimizer.network is None and optimizer.solver_checkpoint[0] == state_format
    optimizer.solver.set_parameters(nn.get_parameters())
    L.restore_optimizer_state(optimizer)
    states = optimizer.solver.get_states()
    assert sorted(states) == sorted(saved)
    for key, pstate in saved.items():
        for name, value in pstate.items():
            np.testing.assert_array_equal(states[key].pstate[name].d, value)


def test_load_links_components_and_restores_states(tmp_path):
    saved = _trained_model(tmp_path / "model.nnp", ".h5")
    nn.clear_parameters()
    info = L.load(str(tmp_path / "model.nnp"))
    optimizer = info.optimizers["opt"]
    assert optimizer.network is info.networks["net"]
    states = optimizer.solver.get_states()
    np.testing.assert_array_equal(states["fc/affine/W"].pstate["mean"].d,
                                  saved["fc/affine/W"]["mean"])


def _mlp_file():
    x = nn.Variable((2, 3))
    y = PF.affine(F.relu(PF.affine(x, 4, name="fc1")), 2, name="fc2")
    buffer = io.BytesIO()
    save(buffer, {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                                "names": {"x": x}}]}, extension=".nnp")
    buffer.seek(0)
    nn.clear_parameters()
    return buffer


def test_function_passes_edit_the_loaders_parameter_scope():
    loader = NnpLoader(_mlp_file(), extension=".nnp")
    replacement = np.full((3, 4), 0.5, dtype=np.float32)
    callback = NnpNetworkPass()

    @callback.on_function_pass_by_name("Affine")
    def replace_weight(f, variables, param_scope):
        with nn.parameter_scope("", param_scope):
            nn.parameter.set_parameter(f.inputs[1].name,
                                       nn.Variable.from_numpy_array(replacement))

    net = loader.get_network("net", callback=callback)
    np.testing.assert_array_equal(net.variables["fc1/affine/W"].d, replacement)
    np.testing.assert_array_equal(nn.get_parameters()["fc1/affine/W"].d, replacement)


def test_variables_cut_off_by_use_up_to_leave_the_network():
    loader = NnpLoader(_mlp_file(), extension=".nnp")
    callback = NnpNetworkPass()
    callback.use_up_to("ReLU_out")
    net = loader.get_network("net", callback=callback)
    assert list(net.outputs) == ["ReLU_out"]
    assert "y" not in net.variables and "fc2/affine/W" not in net.variables
    assert all(v is not None for v in net.variables.values())


def test_an_empty_deconvolution_output_padding_reads_as_zeros():
    f = nnabla_pb2.Function(name="d", type="Deconvolution")
    p = f.deconvolution_param
    p.base_axis, p.group = 1, 1
    for field in (p.pad, p.stride, p.dilation):
        field.dim.extend([0, 0] if field is p.pad else [1, 1])
    args = read_arguments(f)
    assert args["output_padding"] is None           # the spec then fills zeros
    x = nn.Variable.from_numpy_array(np.ones((1, 2, 3, 3)))
    w = nn.Variable.from_numpy_array(np.ones((2, 1, 2, 2)))
    y = F.deconvolution(x, w, **args)
    assert y.shape == (1, 1, 4, 4)


def test_a_variable_batch_broadcast_loads_at_any_batch_size_as_nnabla(tmp_path):
    # nnabla 1.39 saves this broadcast with shape (-1, 3, 3, 3) but declares y as
    # (1, 2, 3, 3, 3); loaded at batch size 8 it gives (8, 3, 3, 3) (recorded from 1.39).
    x = nn.Variable((1, 2, 3, 2, 2))
    h = PF.convolution(x, 3, (2, 2), name="c1", base_axis=2)
    y = F.broadcast(h, shape=(1, 2, 3, 3, 3))
    path = str(tmp_path / "model.nnp")
    save(path, {"networks": [{"name": "model", "batch_size": 1, "outputs": {"y": y},
                              "names": {"x": x}}]})
    nn.clear_parameters()
    info = L.load(path, batch_size=8)
    assert info.networks["model"].variables["y"].variable_instance.shape == (8, 3, 3, 3)
    net = NnpLoader(path).get_network("model", batch_size=8)
    assert net.outputs["y"].shape == (8, 3, 3, 3)


def _dataset_file(tmp_path, values, cache_dir, overwrite):
    csv = tmp_path / "data.csv"
    csv.write_text("x\n" + "".join(f"{v}\n" for v in values))
    proto = nnabla_pb2.NNablaProtoBuf()
    d = proto.dataset.add(name="train", uri=str(csv), cache_dir=str(cache_dir), batch_size=2,
                          shuffle=False, create_cache_explicitly=True,
                          overwrite_cache=overwrite)
    assert d.name == "train"
    path = tmp_path / "model.protobuf"
    path.write_bytes(proto.SerializeToString())
    return str(path)


def _first_batch(info):
    with info.datasets["train"].data_iterator() as di:
        return di.next()[0].ravel().tolist()


def test_an_explicit_dataset_cache_is_created_at_load_and_reused_as_nnabla(tmp_path):
    cache = tmp_path / "cache"
    info = L.load(_dataset_file(tmp_path, [1, 2, 3, 4], cache, overwrite=False))
    assert (cache / "cache_index.csv").exists()      # created by load, before any read
    assert _first_batch(info) == [1.0, 2.0]
    # an existing cache is what the dataset reads unless overwrite_cache is set
    info = L.load(_dataset_file(tmp_path, [5, 6, 7, 8], cache, overwrite=False))
    assert _first_batch(info) == [1.0, 2.0]
    info = L.load(_dataset_file(tmp_path, [5, 6, 7, 8], cache, overwrite=True))
    assert _first_batch(info) == [5.0, 6.0]


def _old_style_context_file(tmp_path, backend, compute_backend):
    proto = nnabla_pb2.NNablaProtoBuf()
    c = proto.global_config.default_context
    c.backend, c.compute_backend, c.array_class = backend, compute_backend, "CpuCachedArray"
    path = tmp_path / "model.protobuf"
    path.write_bytes(proto.SerializeToString())
    return str(path)


def test_an_old_style_context_is_read_as_nnabla_reads_it(tmp_path):
    before = nn.get_current_context()
    try:
        info = L.load(_old_style_context_file(tmp_path, "cpu", "default"))
        ctx = info.global_config.default_context
        assert ctx.backend == ["cpu:float"] and ctx.array_class == "CpuCachedArray"
        with pytest.raises(ValueError, match="compute_backend 'other'"):
            L.load(_old_style_context_file(tmp_path, "cpu|cuda", "other"))
    finally:
        nn.set_default_context(before)
