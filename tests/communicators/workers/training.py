"""all_reduce_callback during backward equals all_reduce after it, in several buckets; a
2-process data-parallel MLP ends with the parameters of one process on the whole batch."""
import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import nnabla.solvers as S

comm, ctx = communicator()
r, n = comm.rank, comm.size
BATCH = 8


def mlp(scope, x, t):
    rng = np.random.RandomState(7)          # the same initial parameters on every rank
    with nn.parameter_scope(scope):
        h = F.relu(PF.affine(x, 16, w_init=I.NormalInitializer(0.3, rng), name="fc1"))
        h = F.tanh(PF.affine(h, 8, w_init=I.NormalInitializer(0.3, rng), name="fc2"))
        y = PF.affine(h, 3, w_init=I.NormalInitializer(0.3, rng), name="fc3")
    return F.mean(F.softmax_cross_entropy(y, t))


def batch(step, rows):
    x = data(100 + step, (BATCH, 5))[rows]
    t = (np.abs(data(200 + step, (BATCH, 1))) * 2).astype(np.int32)[rows] % 3
    return x, t


def params(scope):
    with nn.parameter_scope(scope):
        return list(nn.get_parameters().values())


mine = slice(r * BATCH // n, (r + 1) * BATCH // n)

# 1. the callback against a manual all_reduce, and its buckets
x, t = nn.Variable((BATCH // n, 5)), nn.Variable((BATCH // n, 1))
loss = mlp("cb", x, t)
x.d, t.d = batch(0, mine)
grads = [p.grad for p in params("cb")]
loss.forward()
for g in grads:
    g.zero()
loss.backward()
comm.all_reduce(grads, division=True)
manual = [g.data.copy() for g in grads]

messages = []
real = comm._all_reduce
comm._all_reduce = lambda arrays, *a: (messages.append(len(arrays)), real(arrays, *a))[1]
for scale in (1.0, 0.5):
    for g in grads:
        g.zero()
    messages.clear()
    callback = comm.all_reduce_callback(grads, 100, division=True, scale_grad=scale)
    loss.backward(communicator_callbacks=callback)
    for g, want in zip(grads, manual):
        assert_allclose(g.data, want * scale, rtol=1e-6, atol=1e-7)
    # 6 gradients (16*5+16+8*16+8+3*8+3 values) in 100-value buckets: not one message per
    # parameter, nor all in one
    assert 1 < len(messages) < len(grads) and sum(messages) == len(grads), messages
comm._all_reduce = real

# 2. data-parallel training against one process on the whole batch
xd, td = nn.Variable((BATCH // n, 5)), nn.Variable((BATCH // n, 1))
loss_dp = mlp("dp", xd, td)
xf, tf = nn.Variable((BATCH, 5)), nn.Variable((BATCH, 1))
loss_full = mlp("full", xf, tf)
solvers = {}
for scope in ("dp", "full"):
    solvers[scope] = S.Momentum(0.1, 0.9)
    with nn.parameter_scope(scope):
        solvers[scope].set_parameters(nn.get_parameters())
for step in range(6):
    xd.d, td.d = batch(step, mine)
    loss_dp.forward()
    solvers["dp"].zero_grad()
    loss_dp.backward(communicator_callbacks=comm.all_reduce_callback(
        [p.grad for p in params("dp")], 2 << 20, division=True))
    solvers["dp"].update()
    xf.d, tf.d = batch(step, slice(None))
    loss_full.forward()
    solvers["full"].zero_grad()
    loss_full.backward()
    solvers["full"].update()
moved = 0.0
for p, q, p0 in zip(params("dp"), params("full"), params("cb")):
    assert_allclose(p.d, q.d, rtol=1e-5, atol=1e-6)
    moved = max(moved, np.abs(p.d - p0.d).max())
assert moved > 1e-2, moved                         # training did change the parameters
flat = np.concatenate([p.d.reshape(-1) for p in params("dp")])
every = [ndarray(np.zeros_like(flat)) for _ in range(n)]
comm.all_gather(ndarray(flat), every)
for other in every:
    assert_array_equal(other.data, flat)           # identical on every rank, bit for bit
done(comm)
