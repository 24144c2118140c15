"""How all_reduce, reduce and bcast split a list into messages: arrays of at least
OWN_MESSAGE_BYTES are reduced in their own buffers, the small ones packed per wire dtype,
an array passed twice counted once per occurrence; the results against numpy."""
import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

from nnabla_ext.cpu import communicator as cpu_comm

comm, ctx = communicator()
r, n = comm.rank, comm.size
BIG = cpu_comm.OWN_MESSAGE_BYTES // 4                   # float32 values
SPECS = [((BIG,), np.float32), ((3, 4), np.float32), ((BIG + 5,), np.float32),
         ((5,), np.float16), ((BIG,), np.float16), ((2, 2), np.int32)]

calls = []
real_run = comm._run
comm._run = lambda c, op, group, method, *a: (calls.append((method, a)), real_run(
    c, op, group, method, *a))[1]


def fresh(salt):
    return [ndarray((data(r, s, salt=salt) * 4).astype(dt)) for s, dt in SPECS]


def want(salt, division, scale=1.0):
    total = [sum((data(q, s, salt=salt) * 4).astype(dt).astype(np.float64) * scale
                 for q in range(n)) for s, dt in SPECS]
    return [t // n if dt == np.int32 and division else t / n if division else t
            for t, (_, dt) in zip(total, SPECS)]


def messages(method):
    return [args for m, args in calls if m == method]


for division in (False, True):
    arrays = fresh(1)
    own = [a.get_data("r") for a in arrays[:3:2]]
    calls.clear()
    comm.all_reduce(arrays, division=division)
    sent = messages("Allreduce")
    # the two large float32 arrays in their own buffers; float32 (small + float16 ones)
    # packed together; int32 packed alone
    assert len(sent) == 4, [a[1].shape for a in sent]
    assert sent[0][1].base is own[0].base or np.shares_memory(sent[0][1], own[0])
    assert np.shares_memory(sent[1][1], own[1])
    H = cpu_comm.HEADER                     # each pack ends with the layout check's flags
    assert sorted(a[1].size for a in sent[2:]) == [4 + H, 12 + 5 + BIG + H]
    for a, w, (_, dt) in zip(arrays, want(1, division), SPECS):
        assert a.dtype == dt
        tol = 2e-3 if dt == np.float16 else 1e-6
        assert_allclose(a.data, w, rtol=tol, atol=tol)

# the same array twice: its sum is not taken twice (the second occurrence is packed)
twice = ndarray(data(r, (BIG,), salt=2))
calls.clear()
comm.all_reduce([twice, twice])
assert len(messages("Allreduce")) == 2
assert_allclose(twice.data, data(0, (BIG,), salt=2) + data(1, (BIG,), salt=2), rtol=1e-6)

# the callback's scale multiplies before the sum, in the own buffers too
arrays = fresh(3)
comm._all_reduce(arrays, True, False, "world", 0.5)
for a, w, (s, dt) in zip(arrays, want(3, True, 0.5), SPECS):
    tol = 2e-3 if dt == np.float16 else 1e-6
    if dt == np.int32:      # each rank's values scaled and truncated, then summed
        w = sum(np.trunc((data(q, s, salt=3) * 4).astype(dt) * 0.5) for q in range(n)) // n
    assert_allclose(a.data, w, rtol=tol, atol=tol)

# reduce to rank 0 and bcast from rank 1 through the same plan
arrays = fresh(4)
comm.reduce(arrays, dst=0)
for a, w, (s, dt) in zip(arrays, want(4, False), SPECS):
    mine = (data(r, s, salt=4) * 4).astype(dt)
    tol = 2e-3 if dt == np.float16 else 1e-6
    assert_allclose(a.data, w if r == 0 else mine, rtol=tol, atol=tol)
arrays = fresh(5)
comm.bcast(arrays, src=1)
for a, (s, dt) in zip(arrays, SPECS):
    assert_array_equal(a.data, (data(1, s, salt=5) * 4).astype(dt))
comm._run = real_run
done(comm)
