"""Shared set-up of the tutorial tests.

Each test runs snippets of the nnabla tutorials (nnabla's published tutorial notebooks) as they
are written, minus the plotting. The tutorials import a helper module ``tiny_digits``; ours lives in
``tests/tutorial_data``. Every test starts from an empty parameter registry, the CPU context,
static mode, ``np.random.seed(0)`` and a temporary working folder (the tutorials write files).
"""
import pathlib
import sys

import numpy as np
import pytest

import nnabla as nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tutorial_data"))


@pytest.fixture(autouse=True)
def fresh_nnabla_state(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    context = nn.get_current_context()
    nn.clear_parameters()
    nn.set_auto_forward(False)
    np.random.seed(0)
    yield
    nn.set_default_context(context)
    nn.set_auto_forward(False)
    nn.clear_parameters()


@pytest.fixture(scope="session")
def digits():
    """``tiny_digits.load_digits(n_class=10)``: the 1797 images of scikit-learn."""
    import tiny_digits
    return tiny_digits.load_digits(n_class=10)


@pytest.fixture
def data(digits):
    """The tutorials' ``data_iterator_tiny_digits(digits, batch_size=64, shuffle=True)``."""
    import tiny_digits
    return tiny_digits.data_iterator_tiny_digits(digits, batch_size=64, shuffle=True)
