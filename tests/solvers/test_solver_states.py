"""Parameter and state bookkeeping of solvers, and the state files."""
import os

import h5py
import nnabla as nn
import nnabla.solvers as S
import numpy as np
import pytest
from test_rules import DEFAULTS
from test_solver_api import SHAPES, make_params


def trained(name, steps=3, seed=0, **kwargs):
    rng = np.random.RandomState(seed)
    params = make_params(rng)
    solver = getattr(S, name)(**kwargs)
    solver.set_parameters(params)
    for _ in range(steps):
        for p in params.values():
            p.g = np.asarray(rng.randn(*p.shape), np.float32)
        solver.update()
    return solver, params


def assert_same_states(a, b):
    assert list(a) == list(b)
    for key in a:
        assert a[key].t == b[key].t
        assert sorted(a[key].pstate) == sorted(b[key].pstate)
        for name, var in a[key].pstate.items():
            np.testing.assert_array_equal(var.d, b[key].pstate[name].d)


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_h5_states_round_trip(name, tmp_path):
    solver, params = trained(name)
    path = str(tmp_path / "states.h5")
    solver.save_states(path)
    other = getattr(S, name)()
    other.set_parameters(params)
    other.load_states(path)
    assert_same_states(solver.get_states(), other.get_states())
    assert os.listdir(tmp_path) == ["states.h5"]


def test_h5_layout_is_nnabla_s(tmp_path):
    solver, params = trained("Adam", steps=2)
    solver.set_parameters({"conv/W": nn.Variable((2,))}, reset=False)
    path = str(tmp_path / "s.h5")
    solver.save_states(path)
    with h5py.File(path, "r") as f:
        assert f["zZzZ/t"][()] == 2 and f["zZzZ"].attrs["index"] == 0
        assert f["conv/W/mean"].shape == (2,) and f["conv/W"].attrs["index"] == 3
        assert f["bbb/var"].dtype == np.float32 and f["bbb/var"].shape == SHAPES["bbb"]
    other = S.Adam()
    other.set_parameters({**params, "conv/W": nn.Variable((2,))})
    other.load_states(path)
    assert list(other.get_states()) == ["zZzZ", "bbb", "scalar", "conv/W"]


def test_adabelief_amsgrad_keeps_s_max():
    solver, _ = trained("AdaBelief", amsgrad=True)
    assert sorted(solver.get_states()["bbb"].pstate) == ["mean", "s_max", "var"]


def test_set_parameters_reset_and_retain_state():
    solver, params = trained("Momentum", steps=2)
    momentum = solver.get_states()["bbb"].pstate["m"].d.copy()
    solver.set_parameters({"bbb": nn.Variable(SHAPES["bbb"])}, reset=False, retain_state=True)
    kept = solver.get_states()["bbb"]
    assert kept.t == 2 and np.array_equal(kept.pstate["m"].d, momentum)
    solver.set_parameters({"bbb": params["bbb"]}, reset=False)
    fresh = solver.get_states()["bbb"]
    assert fresh.t == 0 and not fresh.pstate["m"].d.any()
    assert solver.get_parameters()["bbb"] is params["bbb"]
    assert list(solver.get_parameters()) == list(SHAPES)
    solver.set_parameters({"new": nn.Variable((1,))})
    assert list(solver.get_parameters()) == ["new"]


def test_retain_state_with_another_shape_raises():
    solver, _ = trained("Adam", steps=1)
    with pytest.raises(ValueError, match="'bbb'.*shape"):
        solver.set_parameters({"bbb": nn.Variable((5,))}, reset=False, retain_state=True)


def test_remove_and_clear_parameters():
    solver, _ = trained("Adam", steps=1)
    solver.remove_parameters(["bbb", "not-there"])
    assert list(solver.get_parameters()) == ["zZzZ", "scalar"]
    assert list(solver.get_states()) == ["zZzZ", "scalar"]
    solver.clear_parameters()
    assert not solver.get_parameters() and not solver.get_states()


def test_get_states_shares_the_solver_s_variables():
    solver, _ = trained("Adam", steps=1)
    solver.get_states()["bbb"].pstate["mean"].d[...] = 7
    assert (solver.get_states()["bbb"].pstate["mean"].d == 7).all()


def test_set_states_rejects_unknown_keys_names_and_shapes():
    solver, _ = trained("Adam", steps=1)
    states = solver.get_states()
    with pytest.raises(ValueError, match="'nope'.*set_parameters"):
        solver.set_states({"nope": states["bbb"]})
    bad = S.SolverState()
    bad.pstate = {"m": nn.Variable(SHAPES["bbb"])}
    with pytest.raises(ValueError, match="expects"):
        solver.set_states({"bbb": bad})
    bad.pstate = {"mean": nn.Variable((1,)), "var": nn.Variable((1,))}
    with pytest.raises(ValueError, match="shape"):
        solver.set_states({"bbb": bad})


def test_loading_another_solver_s_states_raises_and_changes_nothing(tmp_path):
    adam, params = trained("Adam")
    path = str(tmp_path / "adam.h5")
    adam.save_states(path)
    sgd = S.Momentum()
    sgd.set_parameters(params)
    with pytest.raises(ValueError, match="Momentum expects"):
        sgd.load_states(path)
    assert all(s.t == 0 for s in sgd.get_states().values())


def test_loading_a_missing_file_raises_file_not_found(tmp_path):
    solver, _ = trained("Sgd", steps=0)
    with pytest.raises(FileNotFoundError):
        solver.load_states(str(tmp_path / "none.h5"))


@pytest.mark.parametrize("content", [b"", b"\x89HDF\r\n\x1a\n" + b"\0" * 40,
                                     bytes(np.random.RandomState(0).bytes(4096))])
def test_corrupt_state_files_raise_value_errors(tmp_path, content):
    solver, _ = trained("Adam", steps=0)
    path = tmp_path / "bad.h5"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="load_states"):
        solver.load_states(str(path))


def test_truncated_state_file_raises_value_error(tmp_path):
    solver, _ = trained("Adam")
    path = str(tmp_path / "s.h5")
    solver.save_states(path)
    with open(path, "rb") as f:
        head = f.read()[: os.path.getsize(path) // 2]
    with open(path, "wb") as f:
        f.write(head)
    with pytest.raises(ValueError, match="load_states"):
        solver.load_states(path)


def test_links_in_state_files_are_refused(tmp_path):
    solver, _ = trained("Sgd", steps=1)
    path = str(tmp_path / "s.h5")
    solver.save_states(path)
    with h5py.File(path, "a") as f:
        f["elsewhere"] = h5py.ExternalLink("/etc/passwd.h5", "/x")
    with pytest.raises(ValueError, match="ExternalLink"):
        solver.load_states(path)


def test_failed_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    solver, _ = trained("Adam")
    path = tmp_path / "s.h5"
    path.write_bytes(b"old contents")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(h5py.Group, "create_dataset", broken)
    with pytest.raises(OSError, match="disk full"):
        solver.save_states(str(path))
    assert path.read_bytes() == b"old contents"
    assert os.listdir(tmp_path) == ["s.h5"]


def test_unknown_extensions_raise(tmp_path):
    solver, _ = trained("Sgd", steps=0)
    with pytest.raises(ValueError, match="'.txt'"):
        solver.save_states(str(tmp_path / "s.txt"))
    with pytest.raises(ValueError, match="'.npz'"):
        solver.load_states(str(tmp_path / "s.npz"))


def test_protobuf_states_round_trip(tmp_path):
    solver, params = trained("AdaBelief", amsgrad=True)
    path = str(tmp_path / "s.protobuf")
    solver.save_states(path)
    other = S.AdaBelief(amsgrad=True)
    other.set_parameters(params)
    other.load_states(path)
    assert_same_states(solver.get_states(), other.get_states())
