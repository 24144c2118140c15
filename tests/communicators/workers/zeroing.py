"""all_reduce of arrays that are only zeroed (NdArray.zeroing, e.g. after zero_grad) on
every rank is skipped and they stay zeroed, as in nnabla; one written array on one rank
makes every rank reduce. The same through all_reduce_callback, whose casts to the
communicator's type happen during backward."""
import numpy as np
from _common import communicator, done
from numpy.testing import assert_allclose

import nnabla as nn
import nnabla.functions as F

comm, ctx = communicator()
r, n = comm.rank, comm.size
xs = [nn.Variable((2, 3, 4), need_grad=True), nn.Variable((2, 3), need_grad=True)]
for x in xs:
    x.data.fill(1)
grads = [x.grad for x in xs]

sent = []      # the data collectives: MPI's Allreduce, or the NCCL calls of a collective
real_run = comm._run
comm._run = lambda c, op, group, method, *a: (sent.append(method), real_run(
    c, op, group, method, *a))[1]
if hasattr(comm, "_grouped"):
    real_grouped = comm._grouped
    comm._grouped = lambda calls: (sent.append("Allreduce"), real_grouped(calls))[1]

# zeroed everywhere: no data message, still zeroed
for g in grads:
    g.zero()
comm.all_reduce(grads, division=True)
assert all(g.zeroing for g in grads)
assert "Allreduce" not in sent, sent

# written on rank 0 only: every rank reduces, rank 1's zeros count
for g in grads:
    g.zero()
if r == 0:
    for g in grads:
        g.data = 1
comm.all_reduce(grads, division=True)
assert not any(g.zeroing for g in grads)
for g in grads:
    assert g.dtype == np.float32
    assert_allclose(g.data, np.full(g.shape, 1.0 / n))

# during backward: reduced when backward wrote the gradients, skipped when it did not
y = sum(F.sum(F.relu(x)) for x in xs)
for need_grad, reduced in ((True, True), (False, False)):
    for x in xs:
        x.need_grad = need_grad
    y.forward(clear_no_need_grad=True)
    callback = comm.all_reduce_callback(grads, 1 << 20, division=True)
    assert all(not g._array.has_type() or g.dtype == np.float32 for g in grads)
    for g in grads:
        g.zero()
    sent.clear()
    y.backward(clear_buffer=True, communicator_callbacks=callback)
    assert all(g.zeroing != reduced for g in grads)
    assert ("Allreduce" in sent) == reduced, sent
    if reduced:
        for g in grads:
            assert_allclose(g.data, np.ones(g.shape))
comm._run = real_run
done(comm)
