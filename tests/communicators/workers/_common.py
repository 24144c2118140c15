"""Shared by the workers: the communicator, per-rank data, and the closing line."""
import numpy as np

import nnabla as nn
import nnabla.communicators as C
from nnabla.ext_utils import get_extension_context


def communicator():
    ctx = get_extension_context("cpu")
    comm = C.MultiProcessCommunicator(ctx)
    comm.init()
    return comm, ctx


def data(rank, shape, dtype=np.float32, salt=0):
    """The array rank ``rank`` contributes (every rank can rebuild every other's)."""
    return np.random.RandomState(1000 * salt + rank).randn(*shape).astype(dtype)


def ndarray(values):
    return nn.NdArray.from_numpy_array(np.array(values))


def done(comm):
    comm.barrier()
    print(f"OK {comm.rank}", flush=True)
