"""Shared by the workers: the communicator, per-rank data, and the closing line."""
import os

import numpy as np

import nnabla as nn
import nnabla.communicators as C
from nnabla.ext_utils import get_extension_context


def communicator():
    """The communicator the workers test, chosen by NNABLA_TEST_COMMUNICATOR: ``cpu`` (MPI,
    default), ``nccl`` (the NCCL plugin's, on GPUs) or ``nccl-fake`` (the NCCL communicator
    on the CUDA emulation with fake_nccl.FakeNccl standing in for NCCL). With ``cpu``,
    NNABLA_TEST_BACKEND names the extension of the context (default ``cpu``; the test
    plugin's ``toy`` and ``boxed`` have no communicator of their own, so the CPU's serves
    them, as for any backend without one), which becomes the default context."""
    kind = os.environ.get("NNABLA_TEST_COMMUNICATOR", "cpu")
    if kind == "cpu":
        ctx = get_extension_context(os.environ.get("NNABLA_TEST_BACKEND", "cpu"))
        comm = C.MultiProcessCommunicator(ctx)
        comm.init()
        nn.set_default_context(ctx)
        return comm, ctx
    ctx = get_extension_context("cuda")
    if kind == "nccl-fake":
        from fake_nccl import FakeNccl
        from nnabla_comm_nccl.communicator import NcclCommunicator
        comm = NcclCommunicator(ctx, nccl=FakeNccl())
    else:
        comm = C.MultiProcessCommunicator(ctx)
    comm.init()
    import nnabla_ext.cuda
    device = comm.local_rank % nnabla_ext.cuda.get_device_count()   # the emulation has 1
    ctx = get_extension_context("cuda", device_id=str(device))
    nn.set_default_context(ctx)
    return comm, ctx


def data(rank, shape, dtype=np.float32, salt=0):
    """The array rank ``rank`` contributes (every rank can rebuild every other's)."""
    return np.random.RandomState(1000 * salt + rank).randn(*shape).astype(dtype)


def ndarray(values):
    return nn.NdArray.from_numpy_array(np.array(values))


def done(comm):
    comm.barrier()
    print(f"OK {comm.rank}", flush=True)
