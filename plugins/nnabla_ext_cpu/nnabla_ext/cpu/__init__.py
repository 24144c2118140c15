"""nnabla_ext.cpu: the CPU backend of nnabla (numpy kernels with native C++ hot paths).

Offers nnabla's per-extension helpers: :func:`context`, :func:`get_devices`,
:func:`device_synchronize`, :func:`clear_memory_cache`, and :func:`memory_cache_stats`
of the caching allocator (:mod:`.memory`).
"""
from __future__ import annotations

import operator

__version__ = "0.2.0"
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
    """Threads of the CPU backend: its native loops (im2col, pooling, normalization,
    element-wise activations) and, where numpy's OpenBLAS runs its jobs on the same
    threads (OpenBLAS 0.3.27 or later, see ``nnabla_ext.cpu._blas``), numpy's matrix
    products too.

    The initial value is ``NNABLA_CPU_NUM_THREADS``, else ``OMP_NUM_THREADS``, else every
    usable core; with another BLAS, 1 unless ``NNABLA_CPU_NUM_THREADS`` is set (its
    threads would spin on the cores ours need, see
    ``nnabla_ext.cpu.kernels.native.default_threads``), and BLAS keeps its own setting.
    In a process forked from one that used several threads, the native loops run on one.

    Example:
        >>> import nnabla_ext.cpu
        >>> import nnabla_ext.cpu
        >>> n = nnabla_ext.cpu.get_num_threads()
        >>> nnabla_ext.cpu.set_num_threads(n)
        >>> nnabla_ext.cpu.get_num_threads() == n
        True
    """
    try:
        count = 0 if isinstance(n, bool) else operator.index(n)
    except TypeError:
        count = 0
    if count < 1:
        raise ValueError(f"nnabla_ext.cpu.set_num_threads: argument 'n' is {n!r}; "
                         "expected an integer >= 1")
    n = count
    from . import _blas, _onednn
    from .kernels import native
    native._native.set_num_threads(n)
    _blas.set_num_threads(n)
    _onednn.set_num_threads(n)


def get_num_threads():
    """Threads the native loops use now (see :func:`set_num_threads`)."""
    from .kernels import native
    return native._native.num_threads()


def get_devices():
    """Device ids of this backend (the CPU is one device)."""
    return ["0"]


def get_device_count():
    """Number of devices of this backend: the CPU counts as one, as in nnabla.

    Example:
        >>> import nnabla_ext.cpu
        >>> nnabla_ext.cpu.get_device_count()
        1
    """
    return len(get_devices())


def array_classes():
    """This backend's array class names in order of preference (see
    ``nnabla.prefer_cached_array``)."""
    import nnabla
    return nnabla.array_classes("cpu")


def device_synchronize(device_id="0"):
    """CPU kernels run synchronously; nothing to wait for."""


def clear_memory_cache():
    """Return the blocks the caching allocator keeps for reuse to the OS.

    Arrays in use are not affected. Does nothing when the native module is missing.
    """
    try:
        from . import memory
    except ImportError:
        return
    memory.clear()


def memory_cache_stats():
    """Counters of the caching allocator (arrays of at least 64 KiB; see :mod:`.memory`).

    Returns:
        dict: ``in_use`` and ``cached`` (bytes held by arrays and kept for reuse),
        ``hits`` and ``misses`` (requests served from the cache or mapped anew), ``limit``
        (the bound on ``cached``) and ``installed`` (whether numpy allocates through it).

    Example:
        >>> import nnabla_ext.cpu
        >>> sorted(nnabla_ext.cpu.memory_cache_stats())
        ['cached', 'hits', 'in_use', 'installed', 'limit', 'misses']
    """
    try:
        from . import memory
    except ImportError:
        return {"in_use": 0, "cached": 0, "hits": 0, "misses": 0, "limit": 0,
                "installed": False}
    return memory.stats()
