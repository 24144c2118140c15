"""Sync batch normalization over 2 processes against numpy formulas of batch normalization
over the combined batch (workers/sync_bn_numpy.py): both layouts (axes=[1] and [3]) agree,
gamma's gradient under a constant dy included, and x's gradient is that of the sum of the
ranks' objectives (the batch statistics' gradients of every rank reach x)."""
import pytest


@pytest.mark.parametrize("backend", ["cpu", "boxed"])
def test_sync_batch_normalization_matches_numpy_over_the_combined_batch(run_mpi, backend):
    # boxed: the cpu kernel on arrays refusing numpy conversion (its float64 sums included)
    run_mpi("sync_bn_numpy", env={"NNABLA_TEST_BACKEND": backend})
