"""Packs kept between calls: after an all_reduce the float32 (and int32) arrays of a pack
hold their slices of it, a second call on the same arrays sends the same buffer, and the
buffer is never overwritten while something else still refers to it. Results against numpy
in every case."""
import gc

import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn
from nnabla_ext.cpu import communicator as cpu_comm

comm, ctx = communicator()
r, n = comm.rank, comm.size
SPECS = [((3, 4), np.float32), ((7,), np.float32), ((2, 5), np.float16), ((6,), np.int32),
         ((5, 1), np.float32)]

sent = []       # (dtype, address, bytes) of each Allreduce's buffer: holding the buffer
real_run = comm._run     # itself would make the communicator take a new one next time


def recording_run(c, op, group, method, *args):
    if method == "Allreduce":
        buf = args[1]
        sent.append((buf.dtype, buf.ctypes.data, buf.nbytes))
    return real_run(c, op, group, method, *args)


comm._run = recording_run


def values(q, salt):
    return [(data(q, s, salt=salt) * 4).astype(dt) for s, dt in SPECS]


def total(salt, times=1):
    out = [sum(v.astype(np.float64) for v in vs) for vs in zip(*(values(q, salt)
                                                                 for q in range(n)))]
    return [t * n ** (times - 1) for t in out]


def inside(array, message):
    """Whether the memory of numpy ``array`` lies in the buffer of ``message``."""
    _, start, nbytes = message
    return start <= array.ctypes.data and array.ctypes.data + array.nbytes <= start + nbytes


def check(arrays, want):
    for a, w, (_, dt) in zip(arrays, want, SPECS):
        assert a.dtype == dt
        tol = 2e-2 if dt == np.float16 else 1e-5
        assert_allclose(a.data.astype(np.float64), w, rtol=tol, atol=tol)


# first call: float32 arrays end up holding slices of the float32 pack, the int32 one of
# its own pack; the float16 one is copied back (it travels as float32)
arrays = [ndarray(v) for v in values(r, 1)]
sent.clear()
comm.all_reduce(arrays)
check(arrays, total(1))
buffers = list(sent)
assert sorted(np.dtype(b[0]).str for b in buffers) == ["<f4", "<i4"], buffers
f32 = next(b for b in buffers if b[0] == np.float32)
for a, (_, dt) in zip(arrays, SPECS):
    assert inside(a.data, f32) == (dt == np.float32), dt
assert inside(arrays[3].data, next(b for b in buffers if b[0] == np.int32))

# an array whose storage is held elsewhere (a numpy array from .data, taken before the call)
# gets the result written into that storage, so the holder sees it
held_arrays = [ndarray(v) for v in values(r, 20)]
held = held_arrays[1].data
comm.all_reduce(held_arrays)
assert_allclose(held, total(20)[1], rtol=1e-5, atol=1e-5)
assert held_arrays[1].data is held
assert any(inside(held_arrays[0].data, b) for b in sent)   # the others: in the pack
del held, held_arrays

# second call on the same arrays: the same buffer goes out, nothing is summed twice
sent.clear()
comm.all_reduce(arrays)
check(arrays, total(1, times=2))
assert f32 in sent, (f32, sent)
# a write through .data (the slice itself) is what the next call sends
arrays[0].data[...] = values(r, 2)[0]
comm.all_reduce(arrays)
assert_allclose(arrays[0].data, total(2)[0], rtol=1e-5, atol=1e-5)

# division by the group's size (2: a power of two, folded into the fill): exactly the
# float32 sum divided, on a kept pack and on fresh storage
for fresh in (False, True):
    if fresh:                    # as backward does: every array gets new storage
        for a, v in zip(arrays, values(r, 3)):
            a.copy_from(ndarray(v))
    else:
        for a, v in zip(arrays, values(r, 3)):
            a.data[...] = v
    comm.all_reduce(arrays, division=True)
    for a, (s, dt) in zip(arrays, SPECS):
        parts = [v for v in (values(q, 3)[SPECS.index((s, dt))] for q in range(n))]
        if dt == np.int32:
            assert_array_equal(a.data, sum(p.astype(np.int64) for p in parts) // n)
        elif dt == np.float32:
            want = parts[0].copy()
            for p in parts[1:]:
                want += p
            assert_array_equal(a.data, want / np.float32(n))

# an earlier result still referenced elsewhere is never overwritten: the pack takes a new
# buffer (here the array got new storage, as after backward, while .data of it was kept)
kept = arrays[0].data
kept_values = kept.copy()
arrays[0].copy_from(ndarray(values(r, 4)[0]))
sent.clear()
comm.all_reduce(arrays)
assert_array_equal(kept, kept_values)
assert not any(inside(kept, b) for b in sent)
assert_allclose(arrays[0].data, total(4)[0], rtol=1e-5, atol=1e-5)
# the same for a slice of a result (a numpy view of the pack buffer)
part = arrays[1].data[2:]
part_values = part.copy()
comm.all_reduce(arrays)
assert_array_equal(part, part_values)
del kept, part
gc.collect()

# a lazily zeroed array (zero_grad) and one cleared and rewritten
arrays[1].zero()
arrays[4].data = values(r, 5)[4]
comm.all_reduce(arrays)
assert_array_equal(arrays[1].data, np.zeros(7, np.float32))
assert_allclose(arrays[4].data, total(5)[4], rtol=1e-5, atol=1e-5)

# an array with a narrowed window keeps its own storage (the window sees the result), and
# a window is copied back into its root
root = ndarray(data(r, (4, 3), salt=6))
window = root.narrow(0, 1, 2)
comm.all_reduce([root, ndarray(data(r, (2,), salt=7))])
want = sum(data(q, (4, 3), salt=6) for q in range(n))
assert_allclose(root.data, want, rtol=1e-5)
assert_allclose(window.data, want[1:3], rtol=1e-5)
window.data = data(r, (2, 3), salt=8)
comm.all_reduce([window, ndarray(data(r, (2,), salt=7))])
assert_allclose(root.data[1:3], sum(data(q, (2, 3), salt=8) for q in range(n)), rtol=1e-5)
assert_allclose(root.data[0], want[0], rtol=1e-5)

# packs that do not fit in the cache's budget go through the shared scratch buffer and are
# copied back; the kept packs stay, those of dead arrays make room
budget = cpu_comm.PACK_CACHE_BYTES
comm._packs.clear()
comm._packs_bytes = 0
cpu_comm.PACK_CACHE_BYTES = 200
first = [ndarray(data(r, (30,), salt=11))]
second = [ndarray(data(r, (30,), salt=12)), ndarray(data(r, (3,), salt=10))]
comm.all_reduce(first)
sent.clear()
comm.all_reduce(second)                          # no room: through the scratch buffer
assert_allclose(second[0].data, sum(data(q, (30,), salt=12) for q in range(n)), rtol=1e-5)
assert not any(inside(second[0].data, b) for b in sent)
assert len(comm._packs) == 1
sent.clear()
comm.all_reduce(first)                           # still kept: the same buffer again
assert inside(first[0].data, sent[0])
assert_allclose(first[0].data, 2 * sum(data(q, (30,), salt=11) for q in range(n)), rtol=1e-5)
del first
gc.collect()
sent.clear()
comm.all_reduce(second)                          # first died: its pack makes room
assert len(comm._packs) == 1 and inside(second[0].data, sent[0])
assert_allclose(second[0].data, 2 * sum(data(q, (30,), salt=12) for q in range(n)), rtol=1e-5)
cpu_comm.PACK_CACHE_BYTES = budget

# arrays that died: a new list (whose arrays may reuse the ids) gets a pack of its own
for salt in (13, 14):
    fresh = [ndarray(data(r, (3,), salt=salt)), ndarray(data(r, (2, 2), salt=salt))]
    comm.all_reduce(fresh)
    assert_allclose(fresh[1].data, sum(data(q, (2, 2), salt=salt) for q in range(n)),
                    rtol=1e-5)
    del fresh
    gc.collect()

# reduce and bcast through kept packs: the root's result, the others untouched / received
arrays = [ndarray(v) for v in values(r, 15)]
comm.all_reduce(arrays)                           # packs kept for these arrays
for a, v in zip(arrays, values(r, 16)):
    a.data[...] = v
comm.reduce(arrays, dst=0)
check(arrays, total(16) if r == 0 else [v.astype(np.float64) for v in values(r, 16)])
comm.bcast(arrays, src=1)                         # rank 1 still holds its own values
check(arrays, [v.astype(np.float64) for v in values(1, 16)])
comm._run = real_run
nn.clear_parameters()
done(comm)
