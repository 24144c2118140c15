"""Fixtures for the nnabla_cli tests: the CLI run in-process (nnabla's ``main(argv)``) and a
trained digits project shared by the module."""
import os
import shutil
import sys

import nnabla as nn
import pytest

sys.path.insert(0, os.path.dirname(__file__))
DATA = os.path.join(os.path.dirname(__file__), "..", "data", "cli")

import digits_project  # noqa: E402
from nnabla.utils.cli.cli import main  # noqa: E402


@pytest.fixture
def cli(capsys):
    """Run ``nnabla_cli argv`` in-process; returns (exit code, stdout, stderr)."""
    def run(*argv):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        nn.clear_parameters()
        return code, out, err
    return run


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A digits project folder with ``model.nnp`` (3 epochs) and its CSV datasets."""
    folder = tmp_path_factory.mktemp("digits")
    digits_project.make_project(str(folder), max_epoch=3)
    return folder


@pytest.fixture
def recorded(tmp_path):
    """A copy of tests/data/cli (files recorded from nnabla 1.39) in a temporary folder."""
    target = tmp_path / "recorded"
    shutil.copytree(DATA, target)
    return target
