"""Hooks of the boxed test backend."""
from __future__ import annotations

from nnabla.plugins import Extension, KernelSet, PluginInfo, SolverKernelSet, hookimpl

from . import __version__


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="boxed", version=__version__, api_version=(2, 0))


@hookimpl
def nnabla_extensions():
    return [Extension(name="boxed", family="boxed", array_classes=("BoxedArray",),
                      module="nnabla_ext.boxed", depends=("cpu",))]


@hookimpl
def nnabla_array_classes():
    from ._family import BOXED
    return [BOXED]


@hookimpl
def nnabla_kernels():
    return [KernelSet(backend="boxed", type_configs=("float", "half"),
                      load="nnabla_ext.boxed.kernels:BOXED_KERNELS")]


@hookimpl
def nnabla_solver_kernels():
    return [SolverKernelSet(backend="boxed", load="nnabla_ext.boxed.solvers:BOXED_RULES")]
