"""all_reduce, reduce, bcast, all_gather, reduce_scatter and groups against numpy."""
import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn

comm, ctx = communicator()
r, n = comm.rank, comm.size
assert (n, comm.list_groups()) == (2, {"world": [0, 1]})
shapes = [(2, 3), (5,), (1, 4, 2)]

# all_reduce: packed and one by one, sum and mean, float32 and float16 together
for division in (False, True):
    for inplace in (False, True):
        arrays = [ndarray(data(r, s)) for s in shapes] + [ndarray(data(r, (3,), np.float16))]
        comm.all_reduce(arrays, division=division, inplace=inplace)
        for a, s in zip(arrays, shapes + [(3,)]):
            dtype = a.dtype
            want = sum(data(q, s, dtype).astype(np.float64) for q in range(n))
            want = want / n if division else want
            tol = 1e-3 if dtype == np.float16 else 1e-6
            assert a.dtype == dtype
            assert_allclose(a.data, want, rtol=tol, atol=tol)
one = ndarray(data(r, (4,)))
comm.all_reduce(one)                         # a single NdArray, not a list
assert_allclose(one.data, data(0, (4,)) + data(1, (4,)), rtol=1e-6)

# reduce to rank 1: rank 0 keeps its own values
arrays = [ndarray(data(r, s, salt=1)) for s in shapes]
comm.reduce(arrays, dst=1, division=True)
for a, s in zip(arrays, shapes):
    want = (data(0, s, salt=1) + data(1, s, salt=1)) / 2 if r == 1 else data(r, s, salt=1)
    assert_allclose(a.data, want, rtol=1e-6)

# bcast from rank 1
arrays = [ndarray(data(r, s, salt=2)) for s in shapes]
comm.bcast(arrays, src=1)
for a, s in zip(arrays, shapes):
    assert_array_equal(a.data, data(1, s, salt=2))

# all_gather: entry i holds rank i's array
outs = [ndarray(np.zeros((2, 3), np.float32)) for _ in range(n)]
comm.all_gather(ndarray(data(r, (2, 3), salt=3)), outs)
for q, o in enumerate(outs):
    assert_array_equal(o.data, data(q, (2, 3), salt=3))

# reduce_scatter: rank i receives the sum over ranks of their entry i
ins = [ndarray(data(r, (3,), salt=10 + i)) for i in range(n)]
out = ndarray(np.zeros(3, np.float32))
comm.reduce_scatter(ins, out, division=True)
assert_allclose(out.data, sum(data(q, (3,), salt=10 + r) for q in range(n)) / n, rtol=1e-6)

# groups: a sub-communicator of rank 1 alone, and one of both ranks
assert comm.new_group(("one", [1])) == "one"
assert comm.new_group(("both", [1, 0])) == "both"
assert comm.list_groups() == {"world": [0, 1], "one": [1], "both": [1, 0]}
assert comm.find_group("one") == [1] and comm.find_group("nothing") == []
a = ndarray(data(r, (3,), salt=4))
if r == 1:
    comm.all_reduce(a, group="one")          # a group of one: the sum is the array itself
    assert_array_equal(a.data, data(1, (3,), salt=4))
else:
    try:
        comm.all_reduce(a, group="one")
        raise AssertionError("rank 0 reduced in a group it is not in")
    except ValueError as e:
        assert "not a member of group 'one'" in str(e), e
outs = [ndarray(np.zeros(3, np.float32)) for _ in range(n)]
comm.all_gather(ndarray(data(r, (3,), salt=5)), outs, group="both")
assert_array_equal(outs[0].data, data(1, (3,), salt=5))      # group order: rank 1 first
assert_array_equal(outs[1].data, data(0, (3,), salt=5))
b = ndarray(data(r, (3,), salt=6))
comm.bcast(b, src=0, group="both")
assert_array_equal(b.data, data(0, (3,), salt=6))

# the deprecated allreduce(): the gradients of the parameters added with the context
w = nn.Variable.from_numpy_array(np.zeros(3, np.float32), need_grad=True)
w.g = data(r, (3,), salt=7)
comm.add_context_and_parameters((ctx, {"w": w}))
comm.allreduce(division=True)
assert_allclose(w.g, (data(0, (3,), salt=7) + data(1, (3,), salt=7)) / 2, rtol=1e-6)
done(comm)
