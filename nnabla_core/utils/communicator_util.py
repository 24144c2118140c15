"""The process-wide communicator of nnabla's command-line tools
(``nnabla.utils.communicator_util``).

:func:`create_communicator` makes one only when the process was started by Open MPI's
``mpiexec`` (``OMPI_COMM_WORLD_SIZE`` is set) and keeps it while there are several
processes; :func:`single_or_rankzero` tells whether this process should write files.
"""
from __future__ import annotations

import os

from nnabla.logger import logger

_current_communicator = None


def current_communicator():
    """The communicator made by :func:`create_communicator`, or None."""
    return _current_communicator


def set_communicator(comm):
    """Make ``comm`` (or None) this process's communicator (``nnabla_cli -m`` sets it)."""
    global _current_communicator
    _current_communicator = comm


def create_communicator(ignore_error=False, extension_module="cudnn", type_config="float"):
    """Create and initialise a ``MultiProcessCommunicator`` for the context of
    ``extension_module`` when started by ``mpiexec``; None otherwise or with one process.

    Args:
        ignore_error (bool): on failure, log a warning and return None instead of raising.
        extension_module (str): the extension whose context the communicator uses.
        type_config (str): that context's type configuration.
    """
    global _current_communicator
    _current_communicator = None
    if os.environ.get("OMPI_COMM_WORLD_SIZE") is None:
        return None
    import nnabla.communicators as C
    from nnabla.ext_utils import get_extension_context
    try:
        context = get_extension_context(extension_module, type_config=type_config)
        logger.log(99, f"Create communicator with contexts {context}")
        comm = C.MultiProcessCommunicator(context)
        comm.init()
        context.device_id = str(comm.rank % comm.size)
        _current_communicator = comm if comm.size > 1 else None
    except Exception:
        if not ignore_error:
            raise
        logger.warning("Failed to initialize nnabla.communicators.")
        _current_communicator = None
    return _current_communicator


def single_or_rankzero():
    """True without a communicator, or on rank 0."""
    return _current_communicator is None or _current_communicator.rank == 0
