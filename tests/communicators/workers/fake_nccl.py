"""A stand-in for CuPy's ``cupy.cuda.nccl`` that runs the same calls on MPI over host
memory, so the NCCL communicator's logic (packing, buckets, groups, division by ncclAvg,
roots, pointers and counts) runs without a GPU, on the numpy emulation of CUDA.

It keeps NCCL's semantics where they matter to the caller: calls between ``groupStart`` and
``groupEnd`` run at ``groupEnd``, in order; ``NCCL_AVG`` divides a floating-point result by
the communicator's size and is refused for integers; every call is recorded in ``calls``.
The constants have NCCL's values.
"""
import ctypes

import numpy as np
from mpi4py import MPI

TYPES = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64,
         6: np.float16, 7: np.float32, 8: np.float64}


def _memory(pointer, count, nccl_type):
    dtype = np.dtype(TYPES[nccl_type])
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(pointer)
    return np.frombuffer(raw, dtype)


class FakeNccl:
    NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32 = 0, 1, 2, 3
    NCCL_INT64, NCCL_UINT64, NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64 = 4, 5, 6, 7, 8
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = 0, 1, 2, 3, 4

    def __init__(self):
        self.calls = []          # (name, count, nccl type, op or root, in a group, stream)
        self.groups = 0
        self._queued = None
        self._ids = 0

    def get_unique_id(self):
        self._ids += 1
        return (MPI.COMM_WORLD.Get_rank(), self._ids) + (0,) * 126

    def groupStart(self):
        assert self._queued is None, "nested groupStart"
        self._queued = []

    def groupEnd(self):
        queued, self._queued = self._queued, None
        self.groups += 1
        for run in queued:
            run()

    def NcclCommunicator(self, ndev, uid, rank):
        return FakeComm(self, ndev, uid, rank)

    def _call(self, record, run):
        self.calls.append(record + (self._queued is not None,))
        if self._queued is None:
            run()
        else:
            self._queued.append(run)


class FakeComm:
    """One member of an NCCL communicator; its MPI communicator is built from the members,
    which find each other through the unique id's creator (its world rank is in the id)."""

    def __init__(self, nccl, ndev, uid, rank):
        world = MPI.COMM_WORLD
        creator, tag = uid[0], uid[1]
        if rank == 0:
            assert world.Get_rank() == creator, "the id's creator must be rank 0"
            members = [creator] + [None] * (ndev - 1)
            for _ in range(ndev - 1):
                position, world_rank = world.recv(source=MPI.ANY_SOURCE, tag=tag)
                members[position] = world_rank
            for world_rank in members[1:]:
                world.send(members, dest=world_rank, tag=tag)
        else:
            world.send((rank, world.Get_rank()), dest=creator, tag=tag)
            members = world.recv(source=creator, tag=tag)
        self.mpi = world.Create_group(world.Get_group().Incl(members), tag)
        assert self.mpi.Get_rank() == rank and self.mpi.Get_size() == ndev
        self.nccl, self.members, self.aborted = nccl, members, False

    def rank_id(self):
        return self.mpi.Get_rank()

    def size(self):
        return self.mpi.Get_size()

    def device_id(self):
        return 0

    def abort(self):
        self.aborted = True

    def _finish(self, out, op):
        if op == FakeNccl.NCCL_AVG:
            if out.dtype.kind != "f":
                raise TypeError("fake NCCL: ncclAvg on integers is not used by nnabla")
            out /= self.size()
        elif op != FakeNccl.NCCL_SUM:
            raise ValueError(f"fake NCCL: op {op} is not used by nnabla")

    def allReduce(self, send, recv, count, dtype, op, stream):
        def run():
            out = _memory(recv, count, dtype)
            src = MPI.IN_PLACE if send == recv else _memory(send, count, dtype)
            self.mpi.Allreduce(src, out, MPI.SUM)
            self._finish(out, op)
        self.nccl._call(("allReduce", count, dtype, op, stream), run)

    def reduce(self, send, recv, count, dtype, op, root, stream):
        def run():
            mine = self.rank_id() == root
            out = _memory(recv, count, dtype) if mine else None
            src = MPI.IN_PLACE if mine and send == recv else _memory(send, count, dtype)
            self.mpi.Reduce(src, out, MPI.SUM, root)
            if mine:
                self._finish(out, op)
        self.nccl._call(("reduce", count, dtype, (op, root), stream), run)

    def broadcast(self, send, recv, count, dtype, root, stream):
        def run():
            out = _memory(recv, count, dtype)
            if self.rank_id() == root and send != recv:
                out[...] = _memory(send, count, dtype)
            self.mpi.Bcast(out, root)
        self.nccl._call(("broadcast", count, dtype, root, stream), run)

    def allGather(self, send, recv, count, dtype, stream):
        def run():
            self.mpi.Allgather(_memory(send, count, dtype),
                               _memory(recv, count * self.size(), dtype))
        self.nccl._call(("allGather", count, dtype, None, stream), run)

    def reduceScatter(self, send, recv, recvcount, dtype, op, stream):
        def run():
            out = _memory(recv, recvcount, dtype)
            self.mpi.Reduce_scatter_block(_memory(send, recvcount * self.size(), dtype), out,
                                          MPI.SUM)
            self._finish(out, op)
        self.nccl._call(("reduceScatter", recvcount, dtype, op, stream), run)
