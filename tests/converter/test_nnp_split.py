"""nnabla.utils.converter: ``convert -E <executor> -S <ranges>`` as nnabla 1.39 does it
(recorded by tools/record_converter_split.py): the parts' network texts, what it prints, and
its rules for ranges."""
import argparse
import os
import zipfile

import pytest

from nnabla.utils.converter import convert_files
from nnabla.utils.converter.commands import DEFAULTS

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "converter")
SPLIT = os.path.join(DATA, "split")


def _args(**options):
    return argparse.Namespace(**{**DEFAULTS, **options})


@pytest.mark.conformance
def test_parts_and_summary_are_nnabla_s(tmp_path, capsys, monkeypatch):
    pytest.importorskip("yaml", reason="the split summary is YAML (pip install pyyaml)")
    monkeypatch.chdir(DATA)     # the input is named relative to the data folder, as recorded
    assert convert_files(_args(split="0-1,2-", nnp_import_executor_index=0), ["nnb/mlp.nnp"],
                         str(tmp_path / "mlp.nnp"))
    printed = capsys.readouterr().out.replace(str(tmp_path), "<out>")
    with open(os.path.join(SPLIT, "mlp.stdout.txt")) as stream:
        assert printed == stream.read()
    for part in ("mlp_0_1", "mlp_2_3"):
        with zipfile.ZipFile(str(tmp_path / f"{part}.nnp")) as archive:
            text = archive.read("network.nntxt").decode()
        with open(os.path.join(SPLIT, f"{part}.nntxt")) as stream:
            assert text == stream.read(), part


def test_split_needs_an_executor_index(tmp_path):
    with pytest.raises(ValueError, match='"-S" needs "-E"'):
        convert_files(_args(split="0-1"), [os.path.join(DATA, "nnb", "mlp.nnp")],
                      str(tmp_path / "m.nnp"))
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("ranges, message", [
    ("3", 'range must be "x0-y0,x1-y1,..."'), ("1-2-3", 'range must be "x0-y0'),
    ("a-2", 'range must be "x0-y0'), ("2-9", "range must be in 0 to 3"),
    ("3-1", "range must be in 0 to 3")])
def test_bad_ranges_are_refused_before_anything_is_written(tmp_path, ranges, message):
    pytest.importorskip("yaml", reason="the split summary is YAML (pip install pyyaml)")
    with pytest.raises(ValueError, match=message):
        convert_files(_args(split=ranges, nnp_import_executor_index=0),
                      [os.path.join(DATA, "nnb", "mlp.nnp")], str(tmp_path / "m.nnp"))
    assert not os.listdir(tmp_path)


def test_open_ranges_run_from_the_first_and_to_the_last_function(tmp_path):
    pytest.importorskip("yaml", reason="the split summary is YAML (pip install pyyaml)")
    convert_files(_args(split="-0,1-", nnp_import_executor_index=0),
                  [os.path.join(DATA, "nnb", "mlp.nnp")], str(tmp_path / "m.nnp"))
    assert sorted(os.listdir(tmp_path)) == ["m_0_0.nnp", "m_1_3.nnp"]
    with zipfile.ZipFile(str(tmp_path / "m_1_3.nnp")) as archive:
        assert archive.read("network.nntxt").decode().count("function {") == 3
