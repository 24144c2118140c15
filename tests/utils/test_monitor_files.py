"""The files nnabla.monitor writes are nnabla 1.39's: the scenario of
tests/utils/monitor_cases.py run here and under nnabla 1.39 (recorded by
tools/record_monitor_files.py into tests/data/monitor/nnabla/) gives the same file names,
the same series text byte for byte, the same timer columns and index column, and PNGs with
the same pixels and modes (so nnabla's plot tools and image readers take ours and the
reverse)."""
import os

import numpy as np
import pytest
from PIL import Image

import nnabla.monitor
from monitor_cases import run_scenario

REF = os.path.join(os.path.dirname(__file__), "..", "data", "monitor", "nnabla")


def _files(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, names in os.walk(root) for f in names)


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("monitor"))
    run_scenario(nnabla.monitor, root)
    return root


def test_same_file_names(ours):
    assert _files(ours) == _files(REF)


@pytest.mark.parametrize("name", ["Training-loss.series.txt", "error.series.txt"])
def test_series_files_are_byte_equal(ours, name):
    with open(os.path.join(ours, name), "rb") as a, open(os.path.join(REF, name), "rb") as b:
        assert a.read() == b.read()


def test_timer_file_has_nnablas_indices_and_columns(ours):
    def rows(path):
        with open(path) as f:
            return [line.split() for line in f]
    mine = rows(os.path.join(ours, "Epoch-time.timer.txt"))
    ref = rows(os.path.join(REF, "Epoch-time.timer.txt"))
    assert [(r[0], r[2]) for r in mine] == [(r[0], r[2]) for r in ref]
    assert all(len(r) == 4 for r in mine)
    laps = np.array([float(r[1]) for r in mine])
    np.testing.assert_allclose(np.cumsum(laps), [float(r[3]) for r in mine], rtol=1e-9)


@pytest.mark.parametrize("name", [f for f in _files(REF) if f.endswith(".png")])
def test_png_files_have_the_same_pixels(ours, name):
    with Image.open(os.path.join(ours, name)) as a, Image.open(os.path.join(REF, name)) as b:
        assert a.format == b.format == "PNG"
        assert a.mode == b.mode and a.size == b.size
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
