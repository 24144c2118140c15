"""The steady path without the layout check (the test sets NNABLA_MPI_CHECK_LAYOUT=0): a
packed all_reduce on the arrays of the kept pack of the group's last packed all_reduce is
recognised in one pass from the second call on. Whatever the arrays did between calls, the
sums are numpy's; a held numpy view of a result, another list, another division or an
inplace call is not taken for it; arrays zeroed on every rank are summed (the zeroed flag
travels only with the check); the base class's argument errors are still raised."""
import numpy as np
from _common import communicator, done, ndarray
from _recording import Steady, check_half_copy_goes_stale, inside
from numpy.testing import assert_array_equal

comm, ctx = communicator()
assert not comm._check_layout, "the test runs this worker with NNABLA_MPI_CHECK_LAYOUT=0"
scenario = Steady(comm, exact=True)
r, n, paths, arrays = scenario.r, scenario.n, scenario.paths, scenario.arrays
values, total, write, call = scenario.values, scenario.total, scenario.write, scenario.call
SHAPES = scenario.SHAPES

call(arrays, 0, False)                # the first call: the general path makes the pack
buffer = paths.sent[0]
for step in range(1, 4):
    write(step)
    call(arrays, step, True)
    assert paths.sent == [buffer] and all(inside(a.data, buffer) for a in arrays)

# an array holding its slice and also read as float16: see check_half_copy_goes_stale
write(50)
check_half_copy_goes_stale(comm, arrays, paths, total(50)[1])

# new storage, a lazy fill, a cast away and back: copied in, holding their slices again
write(11)
call(arrays, 11, True, want=scenario.drop_slices(11))
assert paths.sent == [buffer] and all(inside(a.data, buffer) for a in arrays)

# a numpy view of a result held between calls: the general path, a new buffer; the view
# keeps its values
write(12)
part = arrays[2].data[1:]
part_values = part.copy()
call(arrays, 12, False)
assert_array_equal(part, part_values)
buffer = paths.sent[0]
write(13)
call(arrays, 13, True)
assert paths.sent == [buffer]
del part

# another list in between (its own pack): the general path for it and for the next call
# on the first list, which is then the steady one again
others = [ndarray(v) for v in values(r, 14)]
call(others, 14, False)
write(15)
call(arrays, 15, False)
write(16)
call(arrays, 16, True)

# another division: the general path once, then steady; division folded into the fill (2
# processes) gives the bits of the sum divided
for step, path in ((17, False), (18, True), (19, True)):
    write(step)
    call(arrays, step, path, division=True)
write(20)
call(arrays, 20, False)

# an inplace call (one message per array, never the steady path) on the same arrays, then
# the packed call again: the steady path, right sums
write(21)
call(arrays, 21, False, inplace=True)
write(22)
call(arrays, 22, True)

# arrays zeroed on every rank: summed like any others (zeros), on the steady path
for a in arrays:
    a.zero()
call(arrays, 23, True, want=[np.zeros(s, np.float32) for s in SHAPES])

# the base class's argument errors, though the arrays are the kept pack's
scenario.check_errors((
    (([a.data for a in arrays],), {}, TypeError, "argument 'data[0]' is of type ndarray"),
    ((arrays,), {"group": "nope"}, ValueError, "argument 'group' is 'nope'")))
write(24)
call(tuple(arrays), 24, True)

paths.restore()
done(comm)
