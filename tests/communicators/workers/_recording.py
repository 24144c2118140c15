"""Shared by the steady-path workers: record which path each all_reduce took and the buffer
each Allreduce sent; checks both workers make."""

import numpy as np
from numpy.testing import assert_array_equal


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
