"""The cuDNN backend's plugin hooks (entry point ``nnabla.plugins: cudnn``).

The backend runs on the ``cuda`` array family (CuPy arrays) and depends on the ``cuda``
backend; activating it activates that one. Activation fails, with the reason, where CUDA is
unavailable or (on a GPU) the cuDNN library cannot be loaded.
"""
from __future__ import annotations

from nnabla.plugins import Extension, KernelSet, PluginInfo, hookimpl

from . import API_VERSION, __version__


class CudnnUnavailableError(RuntimeError):
    """cuDNN cannot be loaded; the message says why and what to install."""


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="cudnn", version=__version__, api_version=API_VERSION)


@hookimpl
def nnabla_extensions():
    from nnabla_ext.cuda import DEFAULT_ARRAY_CLASSES
    return [Extension(name="cudnn", family="cuda", array_classes=DEFAULT_ARRAY_CLASSES,
                      module="nnabla_ext.cudnn", depends=("cuda",))]


@hookimpl
def nnabla_array_classes():
    import nnabla_ext.cuda
    rt = nnabla_ext.cuda.runtime()     # raises CudaUnavailableError with the reason
    if not rt.emulated:
        check_library()
    return []                          # the arrays are the cuda plugin's family


def check_library():
    """Raise :class:`CudnnUnavailableError` unless the cuDNN frontend and library load."""
    try:
        import cudnn
        version = cudnn.backend_version()
    except Exception as e:  # noqa: BLE001 - ImportError, or the library is missing
        raise CudnnUnavailableError(
            f"cuDNN cannot be loaded ({type(e).__name__}: {e}); install it with "
            "`pip install nvidia-cudnn-frontend nvidia-cudnn-cu13` (nnabla-ext-cudnn "
            "declares both)") from None
    return version


@hookimpl
def nnabla_kernels():
    return [KernelSet(backend="cudnn", type_configs=("float", "half"),
                      load="nnabla_ext.cudnn.kernels:DEVICE_KERNELS")]
