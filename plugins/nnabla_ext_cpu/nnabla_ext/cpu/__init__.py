"""nnabla_ext.cpu: the CPU backend of nnabla (numpy kernels with native C++ hot paths).

Offers nnabla's per-extension helpers: :func:`context`, :func:`get_devices`,
:func:`device_synchronize`, :func:`clear_memory_cache`.
"""
from __future__ import annotations

__version__ = "0.1.0"
API_VERSION = (2, 0)


def context(device_id="", type_config="float", **kw):
    """The context of this backend, as nnabla makes it.

    ``half`` lists ``cpu:float`` after ``cpu:half`` so a function without a half
    kernel still runs. The CPU has no device index: ``device_id`` is ``''``.

    Example:
        >>> import nnabla_ext.cpu
        >>> nnabla_ext.cpu.context(type_config='half').backend
        ['cpu:half', 'cpu:float']
    """
    from nnabla import Context
    if type_config not in ("float", "half"):
        raise ValueError(f"nnabla_ext.cpu.context: argument 'type_config' is {type_config!r}; "
                         "expected 'float' or 'half'")
    backend = ["cpu:half", "cpu:float"] if type_config == "half" else ["cpu:float"]
    return Context(backend=backend, array_class="CpuCachedArray", device_id="")


def set_num_threads(n):
    """Threads of the CPU backend's native loops (im2col, pooling); default 1.

    The environment variable ``NNABLA_CPU_NUM_THREADS`` sets the initial value.
    BLAS (numpy's matrix products) keeps its own setting.
    """
    if int(n) < 1:
        raise ValueError(f"nnabla_ext.cpu.set_num_threads: argument 'n' is {n!r}; "
                         "expected an integer >= 1")
    from .kernels import native
    native._native.set_num_threads(int(n))


def get_devices():
    """Device ids of this backend (the CPU is one device)."""
    return ["0"]


def device_synchronize(device_id="0"):
    """CPU kernels run synchronously; nothing to wait for."""


def clear_memory_cache():
    """Release cached memory (the CPU backend lets numpy's allocator own its memory)."""
