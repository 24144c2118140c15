"""Hooks of the toy backend."""
import numpy as np

from nnabla.array_family import ArrayFamily
from nnabla.plugins import Extension, KernelSet, PluginInfo, hookimpl

from . import ToyArray, __version__, xp


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="toy", version=__version__, api_version=(2, 0))


@hookimpl
def nnabla_extensions():
    return [Extension(name="toy", family="toy", array_classes=("ToyArray",),
                      module="nnabla_ext.toy", depends=("cpu",))]


@hookimpl
def nnabla_array_classes():
    return [ArrayFamily("toy", array_type=ToyArray, xp=xp,
                        to_numpy=lambda a: np.array(a.value), from_numpy=ToyArray,
                        add=lambda a, b: ToyArray(a.value + b.value))]


@hookimpl
def nnabla_kernels():
    return [KernelSet(backend="toy", type_configs=("float",),
                      load="nnabla_ext.toy.kernels:TOY_KERNELS")]
