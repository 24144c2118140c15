"""The CPU backend's plugin hooks (entry point ``nnabla.plugins: cpu``).

Registered through the same entry-point mechanism a third-party backend uses.
Importing this module is cheap: kernel tables load at activation.
"""
from __future__ import annotations

from nnabla.array_family import HOST
from nnabla.plugins import (CommunicatorSet, Extension, KernelSet, PluginInfo, SolverKernelSet,
                            hookimpl)

from . import API_VERSION, __version__


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="cpu", version=__version__, api_version=API_VERSION)


@hookimpl
def nnabla_extensions():
    return [Extension(name="cpu", family="cpu", array_classes=("CpuCachedArray", "CpuArray"),
                      module="nnabla_ext.cpu")]


@hookimpl
def nnabla_array_classes():
    # numpy on the host: the core describes this family itself (NdArray.data is numpy)
    return [HOST]


@hookimpl
def nnabla_kernels():
    # Activation: from now on numpy allocates through the caching allocator if
    # NNABLA_CPU_CACHED_ALLOCATOR=1 (off by default; see nnabla_ext.cpu.memory).
    from . import memory
    memory.install_from_environment()
    return [KernelSet(backend="cpu", type_configs=("float", "half"),
                      load="nnabla_ext.cpu.kernels:CPU_KERNELS")]


@hookimpl
def nnabla_solver_kernels():
    return [SolverKernelSet(backend="cpu", load="nnabla_ext.cpu.solvers:RULES")]


@hookimpl
def nnabla_communicators():
    # mpi4py is imported when a communicator is created, not here
    return [CommunicatorSet(backend="cpu", load="nnabla_ext.cpu.communicator:COMMUNICATORS")]
