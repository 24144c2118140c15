"""Small public modules of the training toolkit: ``nn.Module`` / ``nn.Sequential`` /
``nnabla.core.modules`` against nnabla 1.39's recorded names and values
(tools/record_module_api.py), ``nnabla.grad`` as a module, ``nnabla.numpy_compat_functions``,
``nnabla.contrib.context``, and the tqdm bars of cache building."""
import importlib
import json
import os
import sys

import numpy as np
import pytest

import nnabla as nn
import nnabla.core.modules as modules
import nnabla.functions as F
import nnabla.parametric_functions as PF
from module_api_cases import run_cases
from data_iterator_cases import write_csv_dataset

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "module_api", "reference.json")


@pytest.fixture(scope="module")
def ours_and_recorded():
    with open(DATA) as f:
        recorded = json.load(f)["cases"]
    ours = json.loads(json.dumps(run_cases(nn, F, PF, modules)))
    nn.clear_parameters()
    return ours, recorded


@pytest.mark.parametrize("case", ["sequential", "res_unit"])
def test_module_parameter_names_shapes_and_names_match_nnabla(ours_and_recorded, case):
    ours, recorded = ours_and_recorded
    for key in ("params", "grad_only", "name", "len", "output_shape"):
        if key in recorded[case]:
            assert ours[case][key] == recorded[case][key], key


def test_sequential_chains_its_modules_as_numpy_and_nnabla(ours_and_recorded):
    ours, recorded = ours_and_recorded
    seq = recorded["sequential"]
    p = {k: np.array(v, np.float32) for k, v in seq["param_values"].items()}
    h = np.array(seq["x"], np.float32)
    for scope in ("@fc_0", "@head"):
        h = np.maximum(h @ p[f"{scope}/affine/W"] + p[f"{scope}/affine/b"], 0)
    np.testing.assert_allclose(seq["output"], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours["sequential"]["output"], seq["output"],
                               rtol=1e-5, atol=1e-6)


def test_nnabla_grad_is_a_module_and_nn_grad_stays_the_function():
    module = importlib.import_module("nnabla.grad")
    assert type(module).__name__ == "module" and sys.modules["nnabla.grad"] is module
    from nnabla.grad import grad
    assert grad is nn.grad and callable(nn.grad)
    x = nn.Variable.from_numpy_array(np.array([1.0, -2.0, 3.0], np.float32), need_grad=True)
    (dx,) = grad([F.sum(x ** 3)], [x])
    dx.forward()
    np.testing.assert_allclose(dx.d, 3 * x.d ** 2, rtol=1e-6)


def test_numpy_compat_dot_is_numpy_dot():
    from nnabla.numpy_compat_functions import dot
    rng = np.random.RandomState(0)
    a, b = rng.randn(3, 4).astype(np.float32), rng.randn(4, 2).astype(np.float32)
    out = dot(nn.NdArray.from_numpy_array(a), nn.NdArray.from_numpy_array(b))
    np.testing.assert_allclose(out.data, np.dot(a, b), rtol=1e-5, atol=1e-6)
    v = rng.randn(4).astype(np.float32)
    out = dot(nn.NdArray.from_numpy_array(v), nn.NdArray.from_numpy_array(v))
    np.testing.assert_allclose(out.data, np.dot(v, v), rtol=1e-5)


def test_contrib_extension_context_is_the_extension_context():
    from nnabla.contrib.context import extension_context
    from nnabla.ext_utils import get_extension_context
    ctx = extension_context("cpu", type_config="half")
    ref = get_extension_context("cpu", type_config="half")
    assert ctx.backend == ref.backend and ctx.array_class == ref.array_class


def test_cache_building_shows_tqdm_bars(tmp_path, capsys):
    from nnabla.utils.create_cache import CreateCache
    from nnabla.utils.data_iterator import data_iterator_csv_dataset
    from nnabla.utils.data_source_implements import CsvDataSource

    csv_path = write_csv_dataset(str(tmp_path), 5)
    CreateCache(csv_path, shuffle=False).create(str(tmp_path / "cache"), normalize=False)
    err = capsys.readouterr().err
    assert "Create cache" in err and "/" in err, err
    assert CsvDataSource(csv_path).size == 5

    with data_iterator_csv_dataset(csv_path, 2, shuffle=False, with_memory_cache=False,
                                   cache_dir=str(tmp_path / "file_cache")) as it:
        x, y = it.next()
    err = capsys.readouterr().err
    assert "Create cache" in err, err
    assert x.shape == (2, 3) and y.ravel().tolist() == [0, 1]


def test_data_set_creation_shows_a_tqdm_bar(tmp_path, capsys):
    from nnabla.utils.cli.cli import main
    from nnabla.utils.image_utils import imsave

    rng = np.random.RandomState(0)
    for label in ("cat", "dog"):
        (tmp_path / "src" / label).mkdir(parents=True)
        for i in range(2):
            imsave(str(tmp_path / "src" / label / f"{i}.png"),
                   rng.randint(0, 255, (12, 16, 3)).astype(np.uint8))
    capsys.readouterr()
    code = main(["create_image_classification_dataset", "-i", str(tmp_path / "src"),
                 "-o", str(tmp_path / "out"), "-c", "1", "-w", "8", "-g", "8",
                 "-m", "padding", "-s", "false", "-f1", "train.csv"])
    err = capsys.readouterr().err
    assert code == 0
    assert "Convert" in err and "/4" in err, err
