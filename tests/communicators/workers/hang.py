"""Rank 1 never joins the all_reduce: with the watchdog on, rank 0 raises
CommunicatorTimeoutError after NNABLA_MPI_WATCH_DOG_TIMEOUT seconds and the job is aborted
(the test checks the message, the exit status and the time)."""
import sys
import time

import numpy as np
from _common import communicator, ndarray

import nnabla.communicators as C

comm, ctx = communicator()
comm.barrier()
if comm.rank == 1:
    time.sleep(600)                  # hung peer; killed by the abort
try:
    comm.all_reduce(ndarray(np.ones(4, np.float32)))
except C.CommunicatorTimeoutError as e:
    print(f"TIMEOUT {e}", flush=True)
    sys.exit(3)                       # a clean exit: the job is aborted by the communicator
print("the all_reduce returned without its peer", flush=True)
