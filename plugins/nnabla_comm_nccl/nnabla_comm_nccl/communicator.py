"""The NCCL communicator: ``C.MultiProcessCommunicator(ctx)`` for ``cuda``/``cudnn`` contexts.

One process per GPU, started with ``mpiexec``. MPI (the CPU plugin's
:class:`~nnabla_ext.cpu.communicator.MpiCommunicator`, which this class extends) starts the
job, gives ranks and local ranks, builds groups, broadcasts each group's NCCL unique id and
checks that the ranks pass the same shapes and dtypes; the data moves with NCCL on device
memory:

- every collective runs on the communicator's own CUDA stream, which first waits for the
  current (compute) stream; the compute stream waits for it before the results are read;
- the arrays of one call are carried by few messages (:func:`plan_messages`): an array of at
  least ``OWN_MESSAGE_BYTES`` is reduced in its own buffer, the others are packed per dtype
  into buckets of at most ``NNABLA_NCCL_BUCKET_BYTES`` (default 64 MiB) cut from a buffer kept
  between calls; all messages of a call form one NCCL group (``ncclGroupStart/End``);
- ``division=True`` uses ``ncclAvg`` for floating-point arrays (integers: sum, then floor
  division, as the CPU communicator).

``nccl`` (CuPy's ``cupy.cuda.nccl`` interface: ``get_unique_id``, ``NcclCommunicator``,
``groupStart``/``groupEnd``, the ``NCCL_*`` constants) can be passed in; the tests pass a
stand-in that runs the same calls on MPI over host memory.
"""
from __future__ import annotations

import os

import numpy as np
from nnabla.communicators import WORLD
from nnabla_ext.cpu.communicator import OWN_MESSAGE_BYTES, MpiCommunicator

BUCKET_ENV = "NNABLA_NCCL_BUCKET_BYTES"
DEFAULT_BUCKET_BYTES = 64 << 20
_NCCL_TYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
               "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
               "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64"}


def bucket_bytes():
    """The largest packed message in bytes (``NNABLA_NCCL_BUCKET_BYTES``)."""
    raw = os.environ.get(BUCKET_ENV, str(DEFAULT_BUCKET_BYTES))
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{BUCKET_ENV} is {raw!r}; expected a positive number of bytes")
    return value


def nccl_type(nccl, dtype, api):
    """The NCCL data type constant of numpy ``dtype``; TypeError for one NCCL lacks."""
    name = _NCCL_TYPES.get(np.dtype(dtype).name)
    if name is None:
        raise TypeError(f"{api}: arrays of dtype {np.dtype(dtype).name} cannot be "
                        f"communicated by NCCL; expected one of {sorted(_NCCL_TYPES)}")
    return getattr(nccl, name)


def plan_messages(arrays, inplace, own_bytes, bucket_bytes):
    """Which arrays travel together: ``[("own", [i]) or ("pack", [i, j, ...])]``.

    Args:
        arrays: one ``(key, dtype, nbytes, can_own)`` per array: ``key`` identifies its
            memory (an array passed twice is reduced in its own buffer once, packed after),
            ``can_own`` whether its buffer can carry the message (contiguous).
        inplace (bool): one message per array (nnabla's ``inplace=True``).
        own_bytes (int): arrays this large travel in their own buffer.
        bucket_bytes (int): the largest pack; a pack holds one dtype.
    """
    messages, packs, seen = [], {}, set()
    for i, (key, dtype, nbytes, can_own) in enumerate(arrays):
        if can_own and (inplace or nbytes >= own_bytes) and key not in seen:
            seen.add(key)
            messages.append(("own", [i]))
        elif inplace:
            messages.append(("pack", [i]))
        else:
            pack = packs.get(dtype)
            if pack is None or (pack[1] + nbytes > bucket_bytes and pack[0]):
                pack = packs[dtype] = [[], 0]
                messages.append(("pack", pack[0]))
            pack[0].append(i)
            pack[1] += nbytes
    return messages


def _pointer(array):
    return array.__cuda_array_interface__["data"][0]


class NcclCommunicator(MpiCommunicator):
    """``C.MultiProcessDataParallelCommunicator`` for cuda/cudnn contexts, on NCCL.

    Args:
        ctx (nnabla.Context): a cuda or cudnn context.
        nccl: the NCCL bindings (default: CuPy's, after checking that a GPU, NCCL and MPI
            are there).

    Raises:
        NcclUnavailableError: no GPU, no NCCL library or bindings, or no mpi4py; the message
            says which and what to install.
    """

    NAME = "MultiProcessDataParallelCommunicatorNccl"

    def __init__(self, ctx, nccl=None):
        if nccl is None:
            from ._loader import bindings, check
            check()
            nccl = bindings()
        super().__init__(ctx)
        from nnabla.plugins.resolve import family_of_context
        from nnabla_ext.cuda._device import runtime
        rt = runtime()
        self._cupy, self._emulated, self._devices = rt.cupy, rt.emulated, rt.device_count
        self._family = family_of_context(ctx)
        self._nccl = nccl
        self._nccl_comms = {}
        self._stream = None
        self._device = 0
        self._bucket_bytes = bucket_bytes()
        self._device_scratch = {}

    # -- lifecycle ---------------------------------------------------------------------
    def _init(self):
        super()._init()
        self._device = self._local_rank % max(self._devices, 1)
        with self._cupy.cuda.Device(self._device):
            self._stream = self._cupy.cuda.Stream(non_blocking=True)
        self._nccl_comms[WORLD] = self._create_nccl(self._comms[WORLD])

    def _create_nccl(self, mpi_comm):
        """The NCCL communicator of the processes of ``mpi_comm`` (its rank 0 makes the
        unique id; MPI broadcasts it)."""
        uid = self._nccl.get_unique_id() if mpi_comm.Get_rank() == 0 else None
        uid = mpi_comm.bcast(uid, root=0)
        with self._cupy.cuda.Device(self._device):
            return self._nccl.NcclCommunicator(mpi_comm.Get_size(), uid, mpi_comm.Get_rank())

    def _new_group(self, name, ranks):
        super()._new_group(name, ranks)
        if self._comms[name] != self._MPI.COMM_NULL:
            self._nccl_comms[name] = self._create_nccl(self._comms[name])

    def _barrier(self):
        self._stream.synchronize()
        super()._barrier()

    def _abort(self):
        for comm in self._nccl_comms.values():
            comm.abort()
        super()._abort()

    # -- collectives -------------------------------------------------------------------
    def _all_reduce(self, arrays, division, inplace, group, scale):
        # arrays only zeroed on every rank: skipped, they stay zeroed (the CPU one's rule)
        zeroed = all(a.zeroing for a in arrays)
        mpi_comm = self._comm("all_reduce", group)
        if zeroed and mpi_comm.Get_size() == 1:
            return
        agreement = self._agree_start("all_reduce", group, mpi_comm, arrays, division,
                                      inplace, zeroed=zeroed)
        if self._agree_end(agreement) and zeroed:
            return
        comm = self._nccl_comms[group]
        messages = self._messages(arrays, inplace, write=True)
        if scale != 1.0:
            for buf, _ in messages:
                self._cupy.multiply(buf, scale, out=buf, casting="unsafe")
        self._grouped([lambda b=buf: comm.allReduce(
            _pointer(b), _pointer(b), b.size, self._type(b, "all_reduce"),
            self._op(b, division), self._stream_ptr()) for buf, _ in messages])
        self._finish(messages, division, len(self._groups[group]))

    def _reduce(self, arrays, dst, division, inplace, group):
        comm = self._nccl_comm("reduce", group, arrays, division, inplace, dst)
        root = self._groups[group].index(dst)
        mine = comm.rank_id() == root
        messages = self._messages(arrays, inplace, write=mine)
        self._grouped([lambda b=buf: comm.reduce(
            _pointer(b), _pointer(b), b.size, self._type(b, "reduce"), self._op(b, division),
            root, self._stream_ptr()) for buf, _ in messages])
        if mine:
            self._finish(messages, division, len(self._groups[group]))
        else:
            self._wait_for_nccl()

    def _bcast(self, arrays, src, inplace, group):
        comm = self._nccl_comm("bcast", group, arrays, src)
        root = self._groups[group].index(src)
        mine = comm.rank_id() == root
        messages = self._messages(arrays, inplace, write=not mine)
        self._grouped([lambda b=buf: comm.broadcast(
            _pointer(b), _pointer(b), b.size, self._type(b, "bcast"), root,
            self._stream_ptr()) for buf, _ in messages])
        self._finish(messages if not mine else [], False, 1)

    def _all_gather(self, array, arrays, group):
        comm = self._nccl_comm("all_gather", group, [array])
        send = self._read(array).reshape(-1).copy()
        recv = self._cupy.empty((len(arrays), send.size), send.dtype)
        self._grouped([lambda: comm.allGather(_pointer(send), _pointer(recv), send.size,
                                              self._type(send, "all_gather"),
                                              self._stream_ptr())])
        self._wait_for_nccl()
        for row, out in zip(recv, arrays):
            self._unpack(row, [out])

    def _reduce_scatter(self, arrays, array, division, group):
        comm = self._nccl_comm("reduce_scatter", group, arrays, division)
        send = self._pack([self._read(a) for a in arrays])
        recv = self._cupy.empty(send.size // len(arrays), send.dtype)
        self._grouped([lambda: comm.reduceScatter(
            _pointer(send), _pointer(recv), recv.size, self._type(recv, "reduce_scatter"),
            self._op(recv, division), self._stream_ptr())])
        self._finish([(recv, [array])], division, len(arrays))

    # -- helpers -----------------------------------------------------------------------
    def _nccl_comm(self, op, group, arrays, *options):
        """The group's NCCL communicator, after checking membership and the layout."""
        mpi_comm = self._comm(op, group)
        self._agree(op, group, mpi_comm, arrays, *options)
        return self._nccl_comms[group]

    def _type(self, buf, op):
        return nccl_type(self._nccl, buf.dtype, f"{self.NAME}.{op}")

    def _op(self, buf, division):
        floating = np.dtype(buf.dtype).kind == "f"
        return self._nccl.NCCL_AVG if division and floating else self._nccl.NCCL_SUM

    def _stream_ptr(self):
        return 0 if self._emulated else self._stream.ptr

    def _grouped(self, launches):
        """Run NCCL calls as one group on the communicator's stream, after the work already
        queued on the current stream."""
        if not self._emulated:      # the emulation runs every operation synchronously
            event = self._cupy.cuda.Event()
            event.record(self._cupy.cuda.get_current_stream())
            self._stream.wait_event(event)
        self._nccl.groupStart()
        try:
            for launch in launches:
                launch()
        finally:
            self._nccl.groupEnd()

    def _wait_for_nccl(self):
        if not self._emulated:
            event = self._cupy.cuda.Event()
            event.record(self._stream)
            self._cupy.cuda.get_current_stream().wait_event(event)

    def _finish(self, messages, division, n):
        """After the group: integer division, results copied out of the packs."""
        self._wait_for_nccl()
        for buf, packed in messages:
            if division and np.dtype(buf.dtype).kind in "iu":
                buf //= n
            self._unpack(buf, packed)

    def _read(self, array):
        return array._array.get(array._array.dtype, self._family)

    def _write(self, array):
        return array._array.cast(array._array.dtype, self._family)

    def _messages(self, arrays, inplace, write):
        """``[(device buffer, packed arrays)]`` as :func:`plan_messages` decides."""
        views = [self._read(a) for a in arrays]
        info = [(_pointer(v), np.dtype(v.dtype).name, v.nbytes, bool(v.flags.c_contiguous))
                for v in views]
        self._device_scratch = {d: (0, b) for d, (_, b) in self._device_scratch.items()}
        messages = []
        for kind, members in plan_messages(info, inplace, OWN_MESSAGE_BYTES,
                                           self._bucket_bytes):
            if kind == "own":
                a = arrays[members[0]]
                messages.append(((self._write(a) if write else views[members[0]]).reshape(-1),
                                 []))
            else:
                messages.append((self._pack([views[i] for i in members]),
                                 [arrays[i] for i in members]))
        return messages

    def _pack(self, views):
        """The values of ``views`` (one dtype) in one flat device buffer, cut from the
        buffer kept between calls."""
        dtype = np.dtype(views[0].dtype)
        count = sum(v.size for v in views)
        used, buf = self._device_scratch.get(dtype, (0, None))
        if buf is None or used + count > buf.size:
            size = max(count, 2 * (0 if buf is None else buf.size))
            used, buf = 0, self._cupy.empty(size, dtype)
        out = buf[used:used + count]
        self._device_scratch[dtype] = (used + count, buf)
        start = 0
        for v in views:
            out[start:start + v.size] = v.reshape(-1)
            start += v.size
        return out

    def _unpack(self, buf, packed):
        start = 0
        for a in packed:
            out = self._write(a)
            out[...] = buf[start:start + a.size].reshape(out.shape)
            start += a.size


COMMUNICATORS = {"MultiProcessDataParallelCommunicator": NcclCommunicator}
