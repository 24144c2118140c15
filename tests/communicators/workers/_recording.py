"""Shared by the steady-path workers: record which path each all_reduce took and the buffer
each Allreduce sent; the arrays, values and checks both workers use."""
import os

import numpy as np
from _common import data, ndarray
from numpy.testing import assert_allclose, assert_array_equal


class Recording:
    """A group's MPI communicator, recording ``(address, bytes)`` of the buffer of each
    Allreduce (or Iallreduce, under the watchdog) in ``sent`` (the steady path calls it
    directly, the general path through ``MpiCommunicator._run``); everything else goes to
    the real one."""

    def __init__(self, real, sent):
        self.real = real
        self.sent = sent

    def Allreduce(self, send, buf, op):
        self.sent.append((buf.ctypes.data, buf.nbytes))
        return self.real.Allreduce(send, buf, op)

    def Iallreduce(self, send, buf, op):          # under the watchdog
        self.sent.append((buf.ctypes.data, buf.nbytes))
        return self.real.Iallreduce(send, buf, op)

    def __getattr__(self, name):
        return getattr(self.real, name)

    def __eq__(self, other):
        return self.real == other

    __hash__ = None


class Paths:
    """Installed on ``comm``: ``taken`` lists what each ``_all_reduce_steady`` returned
    (``[True]``: the steady path ran; the general path tries it twice, in ``all_reduce``
    and in ``_all_reduce`` behind the base class's checks: all False), ``sent`` the
    buffers sent. ``restore()`` puts the communicator back as it was."""

    def __init__(self, comm):
        self.comm = comm
        self.taken, self.sent = [], []
        self.real_steady = comm._all_reduce_steady
        self.real_world = comm._comms["world"]

        def steady(*args):
            ok = self.real_steady(*args)
            self.taken.append(ok)
            return ok

        comm._all_reduce_steady = steady
        comm._comms["world"] = Recording(self.real_world, self.sent)

    def clear(self):
        self.taken.clear()
        self.sent.clear()

    def took(self, path):
        """Whether the calls since ``clear()`` were one on the steady path (``path``) or
        only general ones."""
        return self.taken == [True] if path else not any(self.taken)

    def restore(self):
        self.comm._all_reduce_steady = self.real_steady
        self.comm._comms["world"] = self.real_world


def check_half_copy_goes_stale(comm, arrays, paths, want):
    """``arrays[1]`` holds its slice of the kept pack (values already written) and is also
    read as float16 (a second, float16 copy of its values): the steady all_reduce makes
    that copy stale, so a float16 read afterwards gives the sum ``want`` and the
    modification count has moved."""
    stale = arrays[1].get_data("r", dtype=np.float16).copy()
    count = arrays[1].modification_count
    paths.clear()
    comm.all_reduce(arrays)       # (no read through .data first: it would drop the copy)
    assert paths.took(True), paths.taken
    assert arrays[1].modification_count > count
    assert_array_equal(arrays[1].get_data("r", dtype=np.float16), want.astype(np.float16))
    assert not np.array_equal(stale, want.astype(np.float16))


class Steady:
    """The scenario of a steady-path worker on ``comm``: four arrays of :data:`SHAPES`
    (``arrays``) holding ``values(rank, 0)``, the recorded paths (``paths``), and the
    helpers below. ``exact``: ``call`` compares the sums bit for bit (2 processes add each
    pair once), else to 1e-6."""

    SHAPES = [(3, 4), (7,), (2, 5), (6,)]

    def __init__(self, comm, exact):
        # the test runs each worker with and without the watchdog (collectives polled)
        assert (comm._timeout is not None) == (
            os.environ.get("NNABLA_MPI_WATCH_DOG_ENABLE", "0") not in ("", "0"))
        self.comm, self.exact = comm, exact
        self.r, self.n = comm.rank, comm.size
        self.paths = Paths(comm)
        self.arrays = [ndarray(v) for v in self.values(self.r, 0)]

    def values(self, q, salt):
        """Rank ``q``'s values of the arrays for ``salt``."""
        return [data(q, s, salt=salt) for s in self.SHAPES]

    def total(self, salt, division=False):
        """The float32 sum over the ranks (exactly what Allreduce adds for 2 processes)."""
        out = [sum(vs[1:], vs[0].copy())
               for vs in zip(*(self.values(q, salt) for q in range(self.n)))]
        return [o / np.float32(self.n) for o in out] if division else out

    def write(self, salt, targets=None):
        """Write this rank's ``values(salt)`` through ``.data`` (into their slices)."""
        for a, v in zip(self.arrays if targets is None else targets, self.values(self.r, salt)):
            a.data[...] = v

    def call(self, arrays, salt, path, division=False, want=None, **kwargs):
        """all_reduce ``arrays`` (holding ``values(r, salt)``); check the sums and whether
        the steady path ran (``path``)."""
        paths = self.paths
        paths.clear()
        self.comm.all_reduce(arrays, division=division, **kwargs)
        assert paths.took(path), (salt, paths.taken)
        wants = self.total(salt, division) if want is None else want
        for i, (a, w) in enumerate(zip(arrays, wants)):
            assert a.dtype == np.float32, (salt, i, a.dtype)
            if self.exact:
                assert_array_equal(a.data, w, err_msg=f"salt {salt} array {i}")
            else:
                assert_allclose(a.data, w, rtol=1e-6, atol=1e-6, err_msg=f"salt {salt} array {i}")

    def check_errors(self, cases):
        """Each ``(args, kwargs, error, text)``: ``all_reduce(*args, **kwargs)`` raises
        ``error`` with ``text`` in its message (the base class's argument checks)."""
        for args, kwargs, error, text in cases:
            try:
                self.comm.all_reduce(*args, **kwargs)
            except error as e:
                assert text in str(e), e
            else:
                raise AssertionError(f"{text}: no error")

    def drop_slices(self, salt):
        """Make the first three arrays drop their slices, holding ``values(r, salt)`` again
        (array 1: 0.5, a lazy fill): new storage (as backward gives gradients), a lazy
        fill, a cast away and back. Returns the sums to expect."""
        arrays, mine = self.arrays, self.values(self.r, salt)
        arrays[0].copy_from(ndarray(mine[0]))
        arrays[1].data = 0.5
        arrays[2].cast(np.float16)
        arrays[2].cast(np.float32)[...] = mine[2]
        want = self.total(salt)
        want[1] = np.full(self.SHAPES[1], 0.5 * self.n, np.float32)
        return want


def inside(array, message):
    """Whether ``array``'s memory lies in the sent buffer ``message`` (address, bytes)."""
    start, nbytes = message
    return start <= array.ctypes.data and array.ctypes.data + array.nbytes <= start + nbytes
