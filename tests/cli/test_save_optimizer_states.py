"""nnabla.utils.cli.utility.save_optimizer_states: nnabla's checkpoint file names, and the
states read back into a fresh solver."""
from types import SimpleNamespace

import numpy as np
import nnabla as nn
import nnabla.solvers as S
from nnabla.utils import nnabla_pb2
from nnabla.utils.cli.utility import save_optimizer_states


def _config():
    w = nn.Variable.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3),
                                     need_grad=True)
    solver = S.Adam(alpha=0.1)
    solver.set_parameters({"w": w})
    w.g = np.ones((2, 3), np.float32)
    solver.update()
    solver.update()
    optimizer = SimpleNamespace(name="opt", solver=solver)
    return SimpleNamespace(optimizers={"opt": SimpleNamespace(optimizer=optimizer)}), w


def test_h5_states_are_one_file_per_optimizer_and_load_back(tmp_path):
    config, w = _config()
    files = save_optimizer_states(str(tmp_path / "ckpt"), ".h5", config)
    assert files == [str(tmp_path / "ckpt_opt_Adam_optimizer.h5.optimizer")]
    fresh = S.Adam(alpha=0.1)
    fresh.set_parameters({"w": w})
    h5 = tmp_path / "states.h5"
    h5.write_bytes(open(files[0], "rb").read())
    fresh.load_states(str(h5))
    saved = config.optimizers["opt"].optimizer.solver.get_states()["w"]
    loaded = fresh.get_states()["w"]
    assert loaded.t == saved.t == 2
    for key in saved.pstate:
        np.testing.assert_array_equal(loaded.pstate[key].d, saved.pstate[key].d)


def test_protobuf_states_are_one_file_naming_each_optimizer(tmp_path):
    config, _ = _config()
    files = save_optimizer_states(str(tmp_path / "ckpt"), ".protobuf", config)
    assert files == [str(tmp_path / "ckpt_optimizer.protobuf.optimizer")]
    proto = nnabla_pb2.NNablaProtoBuf.FromString(open(files[0], "rb").read())
    assert [o.name for o in proto.optimizer] == ["opt"]
    assert len(proto.optimizer[0].solver.states) == 1


def test_nnp_with_protobuf_solver_states_holds_nnablas_member(tmp_path):
    import zipfile

    import nnabla.functions as F
    from nnabla.utils.save import save
    config, w = _config()
    solver = config.optimizers["opt"].optimizer.solver
    x = nn.Variable((2, 2))
    y = F.affine(x, w)
    contents = {
        "networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                      "names": {"x": x}}],
        "optimizers": [{"name": "opt", "solver": solver, "network": "net",
                        "dataset": "data", "weight_decay": 0, "lr_decay": 1,
                        "lr_decay_interval": 1, "update_interval": 1}],
    }
    path = tmp_path / "m.nnp"
    save(str(path), contents, include_solver_state=True, solver_state_format=".protobuf")
    with zipfile.ZipFile(path) as z:
        assert "optimizer.protobuf.optimizer" in z.namelist()
        proto = nnabla_pb2.NNablaProtoBuf.FromString(z.read("optimizer.protobuf.optimizer"))
    (opt,) = proto.optimizer
    assert opt.name == "opt" and opt.solver.type == "Adam"
    (key, state), = opt.solver.states.items()
    assert state.t == 2
    saved = solver.get_states()[key]
    for name, param in state.state_parameter.items():
        np.testing.assert_allclose(np.array(param.data).reshape(tuple(param.shape.dim)),
                                   saved.pstate[name].d)
