"""nnabla-comm-nccl: the NCCL communicator of nnabla for ``cuda`` and ``cudnn`` contexts.

Installed next to ``nnabla-ext-cuda``, it makes ``C.MultiProcessCommunicator(ctx)`` for a
CUDA context an NCCL communicator (one process per GPU, started with ``mpiexec``)::

    ctx = get_extension_context("cudnn")
    comm = C.MultiProcessCommunicator(ctx)
    comm.init()
    ctx.device_id = str(comm.local_rank)

It is an add-on plugin (entry point ``nnabla.plugins: nccl``): it declares no backend, and
registers its communicator for the ``cuda`` and ``cudnn`` backends (``overrides=True``).
Nothing heavy is imported at registration; :func:`available` says whether it can run here
and, if not, why.
"""
from __future__ import annotations

__version__ = "0.1.0"
API_VERSION = (2, 0)


class NcclUnavailableError(RuntimeError):
    """The NCCL communicator cannot run here; the message says why and what to install."""


def available():
    """Whether the NCCL communicator can run in this process.

    Returns:
        tuple: ``(True, description)``, or ``(False, reason)`` naming what is missing (a
        GPU, the NCCL library, MPI for Python).
    """
    from ._loader import check
    try:
        return True, check()
    except NcclUnavailableError as e:
        return False, str(e)
