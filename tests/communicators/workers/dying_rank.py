"""Rank 1 dies with an exception while rank 0 waits in all_reduce (no watchdog): the
uncaught exception aborts the whole job instead of leaving rank 0 waiting forever."""
import numpy as np
from _common import communicator, ndarray

comm, ctx = communicator()
comm.barrier()
if comm.rank == 1:
    raise RuntimeError("rank 1 fails before the all_reduce")
comm.all_reduce(ndarray(np.ones(4, np.float32)))
print("the all_reduce returned without its peer", flush=True)
