"""The CUDA backend's plugin hooks (entry point ``nnabla.plugins: cuda``).

Discovery (``import nnabla``) reads only the descriptions below; CuPy is imported when the
``cuda`` backend is activated (first use). Without CuPy, a driver or a device, activation
raises :class:`~nnabla_ext.cuda.CudaUnavailableError`, so the plugin is listed as failed
with that reason and ``import nnabla`` is unaffected.
"""
from __future__ import annotations

from nnabla.plugins import Extension, KernelSet, PluginInfo, SolverKernelSet, hookimpl

from . import API_VERSION, DEFAULT_ARRAY_CLASSES, __version__


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="cuda", version=__version__, api_version=API_VERSION)


@hookimpl
def nnabla_extensions():
    return [Extension(name="cuda", family="cuda", array_classes=DEFAULT_ARRAY_CLASSES,
                      module="nnabla_ext.cuda", depends=("cpu",))]


@hookimpl
def nnabla_array_classes():
    from . import memory
    from ._device import runtime
    from ._family import make_family
    rt = runtime()              # raises CudaUnavailableError with the reason
    memory.apply(rt)
    return [make_family(rt)]


@hookimpl
def nnabla_kernels():
    return [KernelSet(backend="cuda", type_configs=("float", "half"),
                      load="nnabla_ext.cuda.kernels:DEVICE_KERNELS")]


@hookimpl
def nnabla_solver_kernels():
    return [SolverKernelSet(backend="cuda", load="nnabla_ext.cuda.solvers:RULES")]
