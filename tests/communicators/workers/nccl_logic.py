"""The NCCL communicator's own logic on the CUDA emulation with fake_nccl standing in for
NCCL (run with NNABLA_TEST_COMMUNICATOR=nccl-fake, NNABLA_NCCL_BUCKET_BYTES=4096): one NCCL
group per collective; ncclAvg divides floats, integers are summed and floor-divided; large
arrays reduced in their own device buffers, small ones packed per dtype in buckets of at
most 4096 bytes; roots and groups as NCCL ranks; the results against numpy."""
import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn
from nnabla_ext.cpu.communicator import OWN_MESSAGE_BYTES

comm, ctx = communicator()
nccl = comm._nccl
r, n = comm.rank, comm.size
BIG = OWN_MESSAGE_BYTES // 4
SPECS = [((BIG,), np.float32), ((300,), np.float32), ((700,), np.float32), ((500,), np.float32),
         ((9,), np.float16), ((4,), np.int32)]


def fresh(salt):
    return [ndarray((data(r, s, salt=salt) * 4).astype(dt)) for s, dt in SPECS]


def expected(salt, division):
    out = []
    for s, dt in SPECS:
        total = sum((data(q, s, salt=salt) * 4).astype(dt).astype(np.float64) for q in range(n))
        out.append(total // n if division and dt == np.int32 else total / n if division
                   else total)
    return out


def check(arrays, salt, division):
    for a, want, (_, dt) in zip(arrays, expected(salt, division), SPECS):
        tol = 2e-3 if dt == np.float16 else 1e-6
        assert a.dtype == dt
        assert_allclose(a.data, want, rtol=tol, atol=tol)


for division in (False, True):
    arrays = fresh(1)
    big = arrays[0]
    nccl.calls.clear()
    groups = nccl.groups
    comm.all_reduce(arrays, division=division)
    assert nccl.groups == groups + 1                      # one NCCL group for the call
    calls = [c for c in nccl.calls if c[0] == "allReduce"]
    assert all(c[-1] for c in calls)                      # every call inside the group
    # the big array alone; 300+700 floats (4000 bytes) in one bucket, 500 in the next;
    # float16 and int32 in packs of their own
    counts = sorted((c[2], c[1]) for c in calls)
    assert counts == sorted([(7, BIG), (7, 1000), (7, 500), (6, 9), (2, 4)]), counts
    ops = {c[2]: c[3] for c in calls}
    assert ops[7] == ops[6] == (nccl.NCCL_AVG if division else nccl.NCCL_SUM)
    assert ops[2] == nccl.NCCL_SUM                        # integers: sum, then floor division
    check(arrays, 1, division)
    # the big array was reduced in its own device buffer: still one valid device copy
    assert big._array.get(np.dtype(np.float32), comm._family) is not None

# inplace=True: one message per array, still one group
arrays = fresh(2)
nccl.calls.clear()
comm.all_reduce(arrays, division=True, inplace=True)
assert len([c for c in nccl.calls if c[0] == "allReduce"]) == len(SPECS)
check(arrays, 2, True)

# reduce to rank 1 and bcast from rank 0: NCCL roots are group positions
arrays = fresh(3)
comm.reduce(arrays, dst=1, division=True)
roots = {c[3][1] for c in nccl.calls if c[0] == "reduce"}
assert roots == {1}
if r == 1:
    check(arrays, 3, True)
else:
    for a, (s, dt) in zip(arrays, SPECS):
        assert_array_equal(a.data, (data(r, s, salt=3) * 4).astype(dt))
arrays = fresh(4)
comm.bcast(arrays, src=0)
for a, (s, dt) in zip(arrays, SPECS):
    assert_array_equal(a.data, (data(0, s, salt=4) * 4).astype(dt))

# a group of rank 1 alone has its own NCCL communicator of one member
comm.new_group(("solo", [1]))
if r == 1:
    assert comm._nccl_comms["solo"].members == [1]
    solo = ndarray(data(r, (5,), salt=5))
    comm.all_reduce(solo, division=True, group="solo")
    assert_allclose(solo.data, data(1, (5,), salt=5), rtol=1e-6)
else:
    assert "solo" not in comm._nccl_comms
    try:
        comm.all_reduce(ndarray(data(r, (5,))), group="solo")
        raise AssertionError("a non-member reduced in group 'solo'")
    except ValueError as e:
        assert "not a member of group 'solo'" in str(e), e
assert comm._nccl_comms["world"].members == [0, 1]

# the callback's scale and buckets on the device
grads = fresh(6)
callback = comm.all_reduce_callback(grads, 10 ** 9, division=True, scale_grad=0.5,
                                    keep_dtype=True)
callback.on_finish_backward()
for a, want, (_, dt) in zip(grads, expected(6, True), SPECS):
    if dt != np.int32:
        tol = 2e-3 if dt == np.float16 else 1e-6
        assert_allclose(a.data, want * 0.5, rtol=tol, atol=tol)

# a dtype NdArray holds but NCCL has no type for: a TypeError naming it, on every rank
try:
    comm.all_reduce(nn.NdArray.from_numpy_array(np.ones(3, np.bool_)))
    raise AssertionError("bool was accepted")
except TypeError as e:
    assert "bool cannot be communicated by NCCL" in str(e), e
done(comm)
