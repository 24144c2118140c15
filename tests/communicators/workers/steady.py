"""The steady-state path of a packed all_reduce (MpiCommunicator._all_reduce_steady): the
forecast call on the arrays of the kept pack that carried it last time, checked in one pass.
Whatever happened to the arrays between calls (written through .data, new storage, a lazy
fill, a cast, a numpy view or window held, one replaced by another array, a lazily zeroed
one), the sums are numpy's; the path is taken only where the general one would send the
same message, and a rank deviating from the forecast still makes every rank raise."""
import numpy as np
from _common import communicator, data, done, ndarray
from _recording import Steady, check_half_copy_goes_stale, inside
from numpy.testing import assert_allclose, assert_array_equal

import nnabla as nn

comm, ctx = communicator()
scenario = Steady(comm, exact=False)
r, n, paths, arrays = scenario.r, scenario.n, scenario.paths, scenario.arrays
taken, sent, took = paths.taken, paths.sent, paths.took
values, total, write, call = scenario.values, scenario.total, scenario.write, scenario.call
SHAPES = scenario.SHAPES

# warm-up: the layout is forecast from the fifth call; the steady path from the sixth (the
# fifth, on the forecast path, records the pack)
for step in range(6):
    write(step)
    call(arrays, step, step == 5)
buffer = sent[0]
assert all(inside(a.data, buffer) for a in arrays)   # every array holds its slice

# written in place through .data (the slices themselves)
write(10)
call(arrays, 10, True)
assert sent == [buffer]

# an array holding its slice and also read as float16: see check_half_copy_goes_stale
write(50)
check_half_copy_goes_stale(comm, arrays, paths, total(50)[1])

# arrays that dropped their slices in different ways, between two calls: new storage (as
# backward gives gradients), a lazy fill, a cast away and back, storage assigned from numpy
# of another dtype; the steady path copies them in and they hold their slices again
write(11)
want = scenario.drop_slices(11)
arrays[3].data = values(r, 11)[3].astype(np.float64)     # the array becomes float64 ...
arrays[3].cast(np.float32)                               # ... and float32 again
call(arrays, 11, True, want=want)
assert sent == [buffer] and all(inside(a.data, buffer) for a in arrays)

# a numpy view of a result held between calls (part of an array's storage): the general
# path runs and the pack takes a new buffer, leaving the view's values as they were
write(12)
part = arrays[2].data[1:]
part_values = part.copy()
call(arrays, 12, False)
assert_array_equal(part, part_values)
assert not inside(arrays[0].data, buffer)
buffer = sent[0]
write(13)
call(arrays, 13, True)            # part refers to the old buffer only: left as it was
assert_array_equal(part, part_values)
assert sent == [buffer]
del part
# the storage itself held (the numpy array .data returns): the general path again; the
# holder sees the result, written into it
write(14)
held = arrays[1].data
call(arrays, 14, False)
assert held is arrays[1].data
assert_array_equal(held, total(14)[1])
buffer = sent[0]
del held
write(15)
call(arrays, 15, True)
assert sent == [buffer]

# an array with a narrowed window: the window sees the result
window = arrays[0].narrow(0, 1, 1)
write(16)
taken.clear()
comm.all_reduce(arrays)
assert_allclose(window.data, total(16)[0][1:2], rtol=1e-6)
assert_allclose(arrays[0].data, total(16)[0], rtol=1e-6)
del window

# one array replaced by another of the same shape (the list is not the kept pack's): the
# general path; every array of the new list gets its sum
replaced = list(arrays)
replaced[2] = ndarray(values(r, 17)[2])
for a, v in zip(replaced, values(r, 17)):
    a.data[...] = v
call(replaced, 17, False)
write(18)
call(arrays, 18, False)

# lazily zeroed arrays: some (summed as zeros), then all on every rank (they stay zeroed:
# nothing is stored), then written again
write(18)
comm.all_reduce(arrays)           # steady again on the original list
write(19)
arrays[1].zero()
want = total(19)
want[1] = np.zeros(7, np.float32)
call(arrays, 19, True, want=want)
for a in arrays:
    a.zero()
taken.clear()
comm.all_reduce(arrays)
assert took(True) and all(a.zeroing for a in arrays), taken
write(20)
call(arrays, 20, True)

# a rank deviating from the forecast (another shape) while the other is on the steady path:
# every rank raises; afterwards the communicator learns the layout again
other = [ndarray(data(r, (9,), salt=21))]
try:
    comm.all_reduce(other if r == 1 else arrays)
    raise AssertionError("a deviation from the forecast did not raise")
except ValueError as e:
    assert "every rank must pass the same" in str(e), e
for step in range(8):
    write(22 + step)
    taken.clear()
    comm.all_reduce(arrays)
assert took(True), taken
assert_allclose(arrays[3].data, total(29)[3], rtol=1e-6)

# the steady path is recognised before the base class's argument checks: a tuple of the
# same arrays is the same call; what the base class refuses is still refused, with its
# error, even when the first arrays are the kept pack's
write(60)
call(tuple(arrays), 60, True)
bad = arrays[:3] + [nn.Variable.from_numpy_array(values(r, 60)[3])]
scenario.check_errors((
    ((bad,), {}, TypeError, "argument 'data[3]' is of type Variable"),
    (([a.data for a in arrays],), {}, TypeError, "argument 'data[0]' is of type ndarray"),
    ((arrays,), {"group": "nope"}, ValueError, "argument 'group' is 'nope'")))
write(61)
call(arrays, 61, True)

# with division (another layout: forecast anew): folded into the fill (2 processes: a
# power of two), exactly the float32 sum divided
for step in range(6):
    write(30 + step)
    call(arrays, 30 + step, step == 5, division=True)
    for a, w in zip(arrays, total(30 + step, division=True)):
        assert_array_equal(a.data, w)

# float16 and float32 arrays in one float32 pack (a float communicator): never the steady
# path (its signature names float16); a float16 array cast to float32 on one rank only is a
# different layout: every rank raises, though the message would be the same
mixed = [ndarray(data(r, (5,), np.float16, salt=40)), ndarray(data(r, (3,), salt=40))]
for step in range(7):
    taken.clear()
    comm.all_reduce(mixed)
    assert took(False), (step, taken)
assert_allclose(mixed[0].data, sum(data(q, (5,), np.float16, salt=40).astype(np.float32)
                                   for q in range(n)) * n ** 6, rtol=2e-2)
if r == 0:
    mixed[0].cast(np.float32)
try:
    comm.all_reduce(mixed)
    raise AssertionError("a float16 array cast to float32 on one rank did not raise")
except ValueError as e:
    assert "every rank must pass the same" in str(e), e

paths.restore()
done(comm)
