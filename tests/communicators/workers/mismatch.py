"""Ranks passing different shapes or dtypes get a ValueError on every rank, not a sum of
garbage; the communicator stays usable afterwards."""
import numpy as np
from _common import communicator, done, ndarray
from numpy.testing import assert_array_equal

comm, ctx = communicator()
r = comm.rank
cases = [
    [ndarray(np.ones(3 + r, np.float32))],                               # shapes differ
    [ndarray(np.ones(3, [np.float32, np.float64][r]))],                  # dtypes differ
    [ndarray(np.ones(3, np.float32)) for _ in range(1 + r)],             # list lengths differ
]
for arrays in cases:
    try:
        comm.all_reduce(arrays)
        raise AssertionError("mismatched all_reduce did not raise")
    except ValueError as e:
        assert f"ranks [{1 - r}]" in str(e) and "every rank must pass the same" in str(e), e
try:
    comm.bcast(ndarray(np.ones(2, np.float32)), src=0 if r == 0 else 1)   # roots differ
    raise AssertionError("mismatched bcast did not raise")
except ValueError as e:
    assert "different collective" in str(e), e
a = ndarray(np.full(3, r + 1.0, np.float32))
comm.all_reduce(a)
assert_array_equal(a.data, [3.0, 3.0, 3.0])
done(comm)
