"""nnabla_ext.cudnn: the cuDNN backend of nnabla (convolutions through cuDNN frontend graphs).

Builds on :mod:`nnabla_ext.cuda`: a ``cudnn`` context lists ``cudnn`` first, then ``cuda``
and ``cpu``, as nnabla-ext-cuda does, so every function without a cuDNN kernel runs on the
CUDA backend. Offers nnabla's module API: :func:`context`, :func:`check_gpu` and the CUDA
helpers (``clear_memory_cache``, ``device_synchronize``, ``get_devices``...). Settings come
from the environment (:mod:`.config`).

Example:
    >>> import nnabla_ext.cudnn
    >>> nnabla_ext.cudnn.context.__name__
    'context'
"""
from __future__ import annotations

from nnabla_ext.cuda import (CudaUnavailableError, array_classes, clear_memory_cache,
                             device_synchronize, get_device_count, get_devices, synchronize)

__version__ = "0.1.0"
API_VERSION = (2, 0)
__all__ = ["context", "check_gpu", "array_classes", "clear_memory_cache", "device_synchronize",
           "get_device_count", "get_devices", "synchronize", "CudaUnavailableError",
           "set_conv_fwd_algo_blacklist", "unset_conv_fwd_algo_blacklist",
           "set_conv_bwd_data_algo_blacklist", "unset_conv_bwd_data_algo_blacklist",
           "set_conv_bwd_filter_algo_blacklist", "unset_conv_bwd_filter_algo_blacklist"]

TYPE_CONFIGS = {
    "float": ["cudnn:float", "cuda:float", "cpu:float"],
    "half": ["cudnn:half", "cudnn:float", "cuda:half", "cuda:float", "cpu:float"],
    "mixed_half": ["cudnn:mixed_half", "cudnn:half", "cudnn:float", "cuda:mixed_half",
                   "cuda:half", "cuda:float", "cpu:float"],
}


def check_gpu(device_id):
    """Raise unless CUDA device ``device_id`` is usable (the message says why)."""
    from nnabla_ext.cuda import check_device
    check_device(device_id, api="nnabla_ext.cudnn.check_gpu")


def context(device_id="0", type_config="float", **kw):
    """The context of the cuDNN backend, as nnabla-ext-cuda makes it.

    Raises:
        CudaUnavailableError: CuPy, the driver or a device is missing.
        ValueError: an unknown ``type_config`` or a device index out of range.
    """
    if type_config not in TYPE_CONFIGS:
        raise ValueError(f"nnabla_ext.cudnn.context: argument 'type_config' is "
                         f"{type_config!r}; expected one of {sorted(TYPE_CONFIGS)}")
    from nnabla_ext.cuda import check_device
    check_device(device_id, api="nnabla_ext.cudnn.context")  # kernels switch to it
    from nnabla import Context
    return Context(backend=list(TYPE_CONFIGS[type_config]), array_class=array_classes()[0],
                   device_id=str(device_id))


# Engines excluded from plan selection, by cuDNN engine index (nnabla's algorithm
# blacklists); read when a plan is built.
BLACKLISTS = {"fprop": set(), "dgrad": set(), "wgrad": set()}


def _blacklist(mode, index, add):
    from .graphs import clear
    (BLACKLISTS[mode].add if add else BLACKLISTS[mode].discard)(int(index))
    clear()                            # plans chosen before no longer hold


def set_conv_fwd_algo_blacklist(index):
    """Never use cuDNN engine ``index`` for forward convolutions."""
    _blacklist("fprop", index, True)


def unset_conv_fwd_algo_blacklist(index):
    _blacklist("fprop", index, False)


def set_conv_bwd_data_algo_blacklist(index):
    """Never use cuDNN engine ``index`` for data gradients."""
    _blacklist("dgrad", index, True)


def unset_conv_bwd_data_algo_blacklist(index):
    _blacklist("dgrad", index, False)


def set_conv_bwd_filter_algo_blacklist(index):
    """Never use cuDNN engine ``index`` for weight gradients."""
    _blacklist("wgrad", index, True)


def unset_conv_bwd_filter_algo_blacklist(index):
    _blacklist("wgrad", index, False)
