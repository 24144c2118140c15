"""Saving and loading .h5 parameter files, including damaged and hostile files."""

import io
import os
import subprocess
import sys

import h5py
import nnabla as nn
import nnabla.initializer as I
import numpy as np
import pytest
from nnabla.parameter import (
    clear_parameters,
    get_parameter_or_create,
    get_parameters,
    load_parameters,
    parameter_scope,
    save_parameters,
)


def _make_parameters():
    rng = np.random.RandomState(0)
    with parameter_scope("net"):
        get_parameter_or_create("conv/W", (4, 3, 2, 2), I.NormalInitializer(rng=rng))
        get_parameter_or_create("conv/b", (4,), I.NormalInitializer(rng=rng))
        get_parameter_or_create("bn/mean", (1, 4, 1, 1), I.ConstantInitializer(2),
                                need_grad=False)
        get_parameter_or_create("a", (3,), I.NormalInitializer(rng=rng))
    return {k: v.d.copy() for k, v in get_parameters(grad_only=False).items()}


def test_save_then_load_restores_values_need_grad_and_order(tmp_path):
    saved = _make_parameters()
    path = str(tmp_path / "params.h5")
    save_parameters(path)
    clear_parameters()
    load_parameters(path)
    loaded = get_parameters(grad_only=False)
    assert list(loaded) == list(saved)
    for name, values in saved.items():
        np.testing.assert_array_equal(loaded[name].d, values)
    assert not loaded["net/bn/mean"].need_grad and loaded["net/conv/W"].need_grad


def test_file_layout_is_one_dataset_per_scoped_name_with_attributes(tmp_path):
    _make_parameters()
    path = tmp_path / "params.h5"
    save_parameters(str(path))
    with h5py.File(path, "r") as handle:
        dataset = handle["net/conv/W"]
        assert dataset.shape == (4, 3, 2, 2)
        assert bool(dataset.attrs["need_grad"]) and int(dataset.attrs["index"]) == 0
        assert not bool(handle["net/bn/mean"].attrs["need_grad"])
        assert int(handle["net/a"].attrs["index"]) == 3


def test_load_overwrites_existing_parameters_in_place(tmp_path):
    saved = _make_parameters()
    path = str(tmp_path / "params.h5")
    save_parameters(path)
    view = get_parameter_or_create("net/conv/b", (4,))
    view.d = 0
    load_parameters(path)
    np.testing.assert_array_equal(view.d, saved["net/conv/b"])


def test_load_under_a_scope_prefixes_the_names(tmp_path):
    _make_parameters()
    path = str(tmp_path / "params.h5")
    save_parameters(path)
    clear_parameters()
    with parameter_scope("copy"):
        load_parameters(path)
    assert "copy/net/conv/W" in get_parameters()


def test_save_selected_params_dict(tmp_path):
    _make_parameters()
    params = get_parameters(grad_only=False)
    path = str(tmp_path / "some.h5")
    save_parameters(path, params={"x/W": params["net/conv/W"]})
    with h5py.File(path, "r") as handle:
        assert list(handle.keys()) == ["x"] and list(handle["x"].keys()) == ["W"]


def test_save_and_load_through_file_objects():
    saved = _make_parameters()
    buffer = io.BytesIO()
    save_parameters(buffer, extension=".h5")
    clear_parameters()
    buffer.seek(0)
    load_parameters(buffer, extension=".h5")
    np.testing.assert_array_equal(get_parameters()["net/a"].d, saved["net/a"])


def test_save_leaves_no_temporary_file_and_replaces_target(tmp_path):
    _make_parameters()
    path = tmp_path / "params.h5"
    path.write_bytes(b"old contents")
    save_parameters(str(path))
    assert os.listdir(tmp_path) == ["params.h5"]
    assert h5py.is_hdf5(path)


def test_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "params.h5"
    path.write_bytes(b"old contents")
    bad = {"a": nn.Variable((1,)), "a/b": nn.Variable((1,))}
    with pytest.raises(ValueError, match="'a'"):
        save_parameters(str(path), params=bad)
    assert path.read_bytes() == b"old contents" and os.listdir(tmp_path) == ["params.h5"]


def test_load_missing_file_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.h5"):
        load_parameters(str(tmp_path / "nothere.h5"))


def test_load_random_bytes_is_refused(tmp_path):
    path = tmp_path / "random.h5"
    path.write_bytes(np.random.RandomState(0).bytes(4096))
    with pytest.raises(ValueError, match="not a readable HDF5"):
        load_parameters(str(path))


def test_load_truncated_file_is_refused_and_changes_nothing(tmp_path):
    _make_parameters()
    path = tmp_path / "params.h5"
    save_parameters(str(path))
    clear_parameters()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match="params.h5"):
        load_parameters(str(path))
    assert get_parameters(grad_only=False) == {}


def test_load_refuses_external_links(tmp_path):
    with h5py.File(tmp_path / "other.h5", "w") as other:
        other["W"] = np.ones(3, np.float32)
        other["W"].attrs["need_grad"] = True
    with h5py.File(tmp_path / "evil.h5", "w") as evil:
        evil["W"] = h5py.ExternalLink("other.h5", "/W")
    with pytest.raises(ValueError, match="external link"):
        load_parameters(str(tmp_path / "evil.h5"))


def test_load_refuses_external_storage(tmp_path):
    (tmp_path / "raw.bin").write_bytes(np.ones(4, np.float32).tobytes())
    with h5py.File(tmp_path / "evil.h5", "w") as evil:
        evil.create_dataset("W", (4,), dtype="<f4", external=[(str(tmp_path / "raw.bin"), 0,
                                                               16)])
        evil["W"].attrs["need_grad"] = True
    with pytest.raises(ValueError, match="external storage"):
        load_parameters(str(tmp_path / "evil.h5"))


def test_load_names_a_missing_need_grad_attribute(tmp_path):
    with h5py.File(tmp_path / "bare.h5", "w") as handle:
        handle["layer/W"] = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="layer/W.*need_grad"):
        load_parameters(str(tmp_path / "bare.h5"))


def test_load_refuses_non_numeric_datasets(tmp_path):
    with h5py.File(tmp_path / "text.h5", "w") as handle:
        handle["W"] = np.array([b"abc"])
        handle["W"].attrs["need_grad"] = True
    with pytest.raises(ValueError, match="'W'.*dtype"):
        load_parameters(str(tmp_path / "text.h5"))


def test_load_shape_mismatch_with_existing_parameter_changes_nothing(tmp_path):
    _make_parameters()
    path = str(tmp_path / "params.h5")
    save_parameters(path)
    clear_parameters()
    get_parameter_or_create("net/conv/b", (4,), I.ConstantInitializer(7))
    get_parameter_or_create("net/a", (5,))
    with pytest.raises(ValueError, match=r"net/a.*\(3,\).*\(5,\)"):
        load_parameters(path)
    np.testing.assert_array_equal(get_parameters()["net/conv/b"].d, np.full(4, 7))


@pytest.mark.parametrize("ext, error", [(".txt", ValueError)])
def test_other_formats_raise_naming_the_extension(tmp_path, ext, error):
    path = str(tmp_path / f"params{ext}")
    with pytest.raises(error, match=ext):
        save_parameters(path)
    with pytest.raises(error, match=ext):
        load_parameters(path)


def test_h5py_is_imported_only_when_a_parameter_file_is_read_or_written(tmp_path):
    code = ("import sys, numpy as np, nnabla as nn, nnabla.functions as F\n"
            "x = nn.Variable.from_numpy_array(np.zeros(4, np.float32))\n"
            "with nn.auto_forward():\n"
            "    F.add_scalar(x, 1.0)\n"
            "print('h5py' in sys.modules)\n"
            "nn.parameter.get_parameter_or_create('w', (2,))\n"
            f"nn.save_parameters({str(tmp_path / 'p.h5')!r})\n"
            "print('h5py' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "True"], out.stderr
