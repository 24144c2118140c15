"""Tests of the CUDA and cuDNN plugins; they run without a GPU.

Tests here run the backends on the numpy emulation of CuPy (``NNABLA_CUDA_EMULATE=1``, set
for each module below), except those marked ``gpu``: they run real CuPy on a device in a
subprocess and skip, saying why, where there is none.
"""
import os

import pytest

import nnabla_ext.cuda  # noqa: E402,F401  first-party: a broken or missing plugin fails here


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped with the reason "
                                       "elsewhere)")


@pytest.fixture(autouse=True, scope="module")
def cuda_emulation():
    """The backend is activated on the emulation (the choice is made once per process)."""
    old = os.environ.get("NNABLA_CUDA_EMULATE")
    os.environ["NNABLA_CUDA_EMULATE"] = "1"
    yield
    if old is None:
        del os.environ["NNABLA_CUDA_EMULATE"]
    else:
        os.environ["NNABLA_CUDA_EMULATE"] = old

