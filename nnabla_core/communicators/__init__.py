"""nnabla.communicators: collectives between processes for distributed training.

The communicator of a context comes from the plugin that registers one for the context's
backend (hook ``nnabla_communicators``): the CPU plugin's runs on MPI (mpi4py), so

    mpiexec -n 2 python train.py

with, in ``train.py``::

    import nnabla.communicators as C
    from nnabla.ext_utils import get_extension_context
    ctx = get_extension_context("cpu")
    comm = C.MultiProcessCommunicator(ctx)
    comm.init()
    ...
    loss.backward()
    comm.all_reduce([v.grad for v in nn.get_parameters().values()], division=True)

A third-party backend registers its own implementation (a :class:`Communicator` subclass)
under the names ``'MultiProcessDataParallelCommunicator'`` and ``'DataParallelCommunicator'``.
"""
from __future__ import annotations

from ..context import Context  # noqa: F401  (nnabla exposes it here too)
from ..plugins.resolve import communicator_factory
from ._base import WORLD, Communicator, CommunicatorTimeoutError  # noqa: F401
from ._callback import AllReduceCallback, CommunicatorBackwardCallback  # noqa: F401

__all__ = ["Communicator", "CommunicatorBackwardCallback", "CommunicatorTimeoutError",
           "DataParallelCommunicator", "MultiProcessDataParallelCommunicator",
           "MultiProcessDataParalellCommunicator", "MultiProcessCommunicator", "Comm", "Dist"]


def _create(name, ctx):
    if not isinstance(ctx, Context):
        raise TypeError(f"C.{name}: argument 'ctx' is of type {type(ctx).__name__}; "
                        "expected nnabla.Context (e.g. get_extension_context('cpu'))")
    factory, backend = communicator_factory(name, ctx)
    comm = factory(ctx)
    if not isinstance(comm, Communicator):
        raise TypeError(f"C.{name}: the communicator registered for backend '{backend}' "
                        f"made a {type(comm).__name__}; expected a "
                        "nnabla.communicators.Communicator")
    return comm


def DataParallelCommunicator(ctx):
    """Data-parallel communicator within one process, over the contexts (devices) added
    with :meth:`Communicator.add_context_and_parameters`; :meth:`Communicator.allreduce`
    sums their parameters' gradients.

    Args:
        ctx (nnabla.Context): the context whose backend implements the communicator.

    Returns:
        Communicator
    """
    return _create("DataParallelCommunicator", ctx)


def MultiProcessDataParallelCommunicator(ctx):
    """Communicator between processes (one per device), started with
    ``mpiexec -n N python script.py``.

    Args:
        ctx (nnabla.Context): the context whose backend implements the communicator.

    Returns:
        Communicator

    Raises:
        ImportError: the backend's transport is not installed (CPU: ``pip install
            nnabla-ext-cpu[mpi]``).
    """
    return _create("MultiProcessDataParallelCommunicator", ctx)


# nnabla's aliases: the misspelt name for backward compatibility, the general names.
MultiProcessDataParalellCommunicator = MultiProcessDataParallelCommunicator
MultiProcessCommunicator = MultiProcessDataParallelCommunicator
Comm = MultiProcessDataParallelCommunicator
Dist = MultiProcessDataParallelCommunicator
