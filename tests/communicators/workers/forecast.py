"""The layout check riding in the data (nnabla_ext.cpu.communicator._Forecasts): a packed
all_reduce repeated after the same collectives sends its data at once, without the exchange
before it; the results stay numpy's; a rank that deviates from the forecast (another shape,
another collective) makes every rank raise, and the communicator learns again afterwards."""
import numpy as np
from _common import communicator, data, done, ndarray
from numpy.testing import assert_allclose, assert_array_equal

comm, ctx = communicator()
r, n = comm.rank, comm.size
SPECS = [((3, 4), np.float32), ((5,), np.float16), ((2, 2), np.int32), ((7,), np.float32)]

exchanges = []          # the checks made by an exchange before the data
real_start = comm._agree_start
comm._agree_start = lambda *a, **k: (exchanges.append(a[0]), real_start(*a, **k))[1]


def fresh(salt):
    return [ndarray((data(r, s, salt=salt) * 4).astype(dt)) for s, dt in SPECS]


def want(salt, division):
    out = []
    for s, dt in SPECS:
        total = sum((data(q, s, salt=salt) * 4).astype(dt).astype(np.float64)
                    for q in range(n))
        out.append(total // n if dt == np.int32 and division else
                   total / n if division else total)
    return out


def check(arrays, salt, division):
    for a, w, (_, dt) in zip(arrays, want(salt, division), SPECS):
        assert a.dtype == dt
        tol = 2e-3 if dt == np.float16 else 1e-6
        assert_allclose(a.data.astype(np.float64), w, rtol=tol, atol=tol)


# the same call again and again (new values each time, as gradients): exchanges for the
# first four calls (nothing forecast yet: a layout is forecast once it followed the same two
# collectives twice), none afterwards
arrays = fresh(0)
for step in range(6):
    for a, v in zip(arrays, fresh(step)):
        a.data = v.data
    exchanges.clear()
    comm.all_reduce(arrays, division=True)
    check(arrays, step, True)
    assert exchanges == ([] if step >= 4 else ["all_reduce"]), (step, exchanges)

# zeroed on every rank, forecast: nothing stored, they stay zeroed
for a in arrays:
    a.zero()
exchanges.clear()
comm.all_reduce(arrays, division=True)
assert exchanges == [] and all(a.zeroing for a in arrays)
assert_array_equal(arrays[0].data, np.zeros((3, 4)))

# two layouts taking turns (as the buckets of all_reduce_callback): forecast too
other = [ndarray(data(r, (9,), salt=7))]
for step in range(8):
    exchanges.clear()
    comm.all_reduce(other)
    comm.all_reduce(arrays)
    if step >= 4:
        assert exchanges == [], (step, exchanges)
assert_allclose(other[0].data, sum(data(q, (9,), salt=7) for q in range(n)) * n ** 7,
                rtol=1e-5)


def deviate(call, expect):
    """After the turns above, rank 1 does ``call`` instead of the forecast all_reduce."""
    comm.all_reduce(other)
    try:
        if r == 1:
            call()
        else:
            comm.all_reduce(arrays)
        raise AssertionError("a deviation from the forecast did not raise")
    except ValueError as e:
        assert expect(e), e


# another shape, another dtype, another collective, all of rank 1's own
deviate(lambda: comm.all_reduce([ndarray(np.ones(3, np.float32))]),
        lambda e: f"ranks [{1 - r}]" in str(e) and "every rank must pass the same" in str(e))
for step in range(3):                               # learnt again
    comm.all_reduce(other)
    comm.all_reduce(arrays)
deviate(lambda: comm.all_reduce([ndarray(a.data) if i else ndarray(np.ones((3, 4), np.float64))
                                 for i, a in enumerate(arrays)]),
        lambda e: f"ranks [{1 - r}]" in str(e))
for step in range(3):
    comm.all_reduce(other)
    comm.all_reduce(arrays)
deviate(lambda: comm.bcast(other, src=0), lambda e: "different collective" in str(e))

# usable afterwards: results against numpy
for step in range(4):
    fresh_values = fresh(20 + step)
    for a, v in zip(arrays, fresh_values):
        a.data = v.data
    comm.all_reduce(other)
    comm.all_reduce(arrays)
    check(arrays, 20 + step, False)
done(comm)
