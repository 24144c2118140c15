"""examples/train_digits_distributed.py under ``mpiexec -n 2``: every rank ends with the
same parameters, bit for bit, and they are those of one process trained on the combined
batch (train_digits.py's network, no communicator), to float32 rounding."""
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "train_digits_distributed.py"
# Momentum: with Adam, the biases of the convolutions followed by batch normalization (their
# gradient is zero up to rounding) take steps of rounding noise (docs/distributed.md).
ARGS = ["--epochs", "2", "--batch-size", "64", "--solver", "momentum", "--min-accuracy", "0",
        "--out-per-rank"]


def _parameters(path):
    nn.clear_parameters()
    nn.load_parameters(str(path))
    values = {k: v.d.copy() for k, v in nn.get_parameters(grad_only=False).items()}
    nn.clear_parameters()
    return values


def test_two_process_digits_training_matches_one_process_on_the_combined_batch(
        run_mpi, tmp_path):
    pytest.importorskip("sklearn", reason="the digits example needs scikit-learn")
    out = run_mpi(EXAMPLE, n=2, timeout=300, cwd=tmp_path,
                  args=[*ARGS, "--out", str(tmp_path / "dp.h5")])
    assert "2 process(es)" in out.stdout and "identical on all ranks: True" in out.stdout
    single = subprocess.run([sys.executable, str(EXAMPLE), *ARGS, "--single-process",
                             "--out", str(tmp_path / "one.h5")], capture_output=True,
                            text=True, timeout=300, cwd=tmp_path)
    assert single.returncode == 0, single.stdout + single.stderr

    rank0, rank1 = _parameters(tmp_path / "dp.rank0.h5"), _parameters(tmp_path / "dp.rank1.h5")
    one = _parameters(tmp_path / "one.rank0.h5")
    assert sorted(rank0) == sorted(rank1) == sorted(one) and len(one) == 16
    for name in one:
        assert_array_equal(rank0[name], rank1[name], err_msg=name)
        assert_allclose(rank0[name], one[name], rtol=1e-4, atol=2e-6, err_msg=name)
    # the comparison is not vacuous: the 2-process parameters are not the initial ones
    start = _initial_parameters(tmp_path)
    assert max(np.abs(rank0[k] - start[k]).max() for k in one) > 0.05


def _initial_parameters(tmp_path):
    """The parameters after no training step (0 epochs), one process."""
    subprocess.run([sys.executable, str(EXAMPLE), *ARGS, "--epochs", "0", "--single-process",
                    "--out", str(tmp_path / "init.h5")], check=True, capture_output=True,
                   timeout=300, cwd=tmp_path)
    return _parameters(tmp_path / "init.rank0.h5")
