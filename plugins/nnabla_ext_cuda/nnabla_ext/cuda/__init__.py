"""nnabla_ext.cuda: the CUDA backend of nnabla, on CuPy.

Offers nnabla-ext-cuda's module API: :func:`context`, :func:`get_device_count`,
:func:`get_devices`, :func:`device_synchronize`, :func:`synchronize`,
:func:`clear_memory_cache`, :func:`array_classes` and the ``prefer_*`` array choices.
Importing this module is cheap and never fails for want of a GPU: CuPy is imported when the
backend is first used, and :func:`available` tells whether it can be.

Example:
    >>> import nnabla_ext.cuda
    >>> nnabla_ext.cuda.context.__name__
    'context'
"""
from __future__ import annotations

from ._device import CudaUnavailableError, emulation_requested, status

__version__ = "0.1.0"
API_VERSION = (2, 0)
__all__ = ["context", "available", "get_device_count", "get_devices", "device_synchronize",
           "synchronize", "clear_memory_cache", "array_classes", "prefer_cached_array",
           "prefer_cuda_cached_array", "prefer_unified_array", "prefer_cpu_pinned_array",
           "reset_array_preference", "CudaUnavailableError", "emulation_requested",
           "memory_cache_stats", "runtime", "use_device"]

DEFAULT_ARRAY_CLASSES = ("CudaCachedArray", "CudaArray", "CudaCachedUnifiedArray",
                         "CudaCachedHostArray")
TYPE_CONFIGS = {
    "float": ["cuda:float", "cpu:float"],
    "half": ["cuda:half", "cuda:float", "cpu:float"],
    "mixed_half": ["cuda:mixed_half", "cuda:float", "cpu:float"],
}
# The class a prefer_* call of this module put first (None: the core's order alone).
_preferred = {"name": None}


def available():
    """``(True, '')`` when the backend can run here, else ``(False, reason)``."""
    return status()


def _runtime():
    from ._device import runtime as chosen
    return chosen()


def runtime():
    """The device layer in use: ``.cupy`` (CuPy, or the emulation's namespace),
    ``.emulated`` and ``.device_count``; chosen at the first call.

    Raises:
        CudaUnavailableError: neither a usable device nor ``NNABLA_CUDA_EMULATE=1``.
    """
    return _runtime()


def check_device(device_id, api="nnabla_ext.cuda.context"):
    """Raise :class:`CudaUnavailableError` unless device ``device_id`` exists."""
    rt = _runtime()
    try:
        index = int(device_id)
    except (TypeError, ValueError):
        raise ValueError(f"{api}: argument 'device_id' is {device_id!r}; expected a device "
                         "index such as '0'") from None
    if not 0 <= index < rt.device_count:
        raise ValueError(f"{api}: argument 'device_id' is {device_id!r}; this machine has "
                         f"{rt.device_count} CUDA device(s) (ids 0..{rt.device_count - 1})")
    return index


def use_device(device_id, api="nnabla_ext.cuda.use_device"):
    """Check ``device_id`` and make it CuPy's current device; return its index.

    Contexts do not need it (each kernel, allocation and solver update of a context runs
    on the context's device); it is for code that calls CuPy directly."""
    index = check_device(device_id, api)
    _runtime().cupy.cuda.Device(index).use()
    return index


def context(device_id="0", type_config="float", **kw):
    """The context of the CUDA backend, as nnabla-ext-cuda makes it.

    The context's arrays are allocated, and its functions and solver updates computed, on
    device ``device_id`` (whichever device is CuPy's current one); the current device is
    left as it is.

    Args:
        device_id (str or int): the GPU index.
        type_config (str): ``'float'``, ``'half'`` or ``'mixed_half'``.

    Raises:
        CudaUnavailableError: CuPy, the driver or a device is missing (the message says
            which, and how to check).
        ValueError: an unknown ``type_config`` or a device index out of range.
    """
    if type_config not in TYPE_CONFIGS:
        raise ValueError(f"nnabla_ext.cuda.context: argument 'type_config' is "
                         f"{type_config!r}; expected one of {sorted(TYPE_CONFIGS)}")
    check_device(device_id)
    from nnabla import Context
    name = array_classes()[0]
    from . import memory
    if memory.current() is not None and memory.current() != name:
        memory.use_array_class(name)    # nn.prefer_cached_array changed the order since
    return Context(backend=list(TYPE_CONFIGS[type_config]), array_class=name,
                   device_id=str(device_id))


def get_device_count():
    """The number of CUDA devices (0 when CUDA is unavailable)."""
    ok, _ = status()
    return _runtime().device_count if ok else 0


def get_devices():
    """Device ids as strings (``['0', '1']``); empty when CUDA is unavailable."""
    return [str(i) for i in range(get_device_count())]


def device_synchronize(device="0"):
    """Wait for every kernel queued on ``device`` (``cudaDeviceSynchronize``)."""
    cp = _runtime().cupy
    with cp.cuda.Device(int(device)):
        cp.cuda.runtime.deviceSynchronize()


def synchronize(device_id="0", **kw):
    """Alias of :func:`device_synchronize`, as in nnabla."""
    return device_synchronize(device_id)


def clear_memory_cache():
    """Return the caching pools' free blocks to the driver, on every device (CuPy keeps a
    pool per device and frees the current device's); arrays in use are kept."""
    ok, _ = status()
    if ok:
        rt = _runtime()
        cp = rt.cupy
        pool = cp.get_default_memory_pool()
        for index in range(rt.device_count):
            with cp.cuda.Device(index):
                pool.free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def memory_cache_stats():
    """``{'used': bytes held by arrays, 'total': bytes the pool holds}`` of the device pool."""
    ok, _ = status()
    if not ok:
        return {"used": 0, "total": 0}
    pool = _runtime().cupy.get_default_memory_pool()
    return {"used": pool.used_bytes(), "total": pool.total_bytes()}


def array_classes():
    """The CUDA array class names, the preferred (the contexts' default) first.

    The order is the core's (``nnabla.array_classes('cuda')``: the declared order, with
    ``nnabla.prefer_cached_array`` putting the memory-pooled classes first or last), with
    the class chosen by this module's ``prefer_*`` functions moved to the front.
    """
    import nnabla
    try:
        names = nnabla.array_classes("cuda")
    except ValueError:          # the plugin is not registered (autoload off): declared order
        names = list(DEFAULT_ARRAY_CLASSES)
    chosen = _preferred["name"]
    if chosen is not None:
        names.remove(chosen)
        names.insert(0, chosen)
    return names


def _prefer(name):
    _preferred["name"] = name
    from . import memory
    memory.use_array_class(name)


def prefer_cached_array(prefer=True):
    """Prefer (or not) the memory-pooled array classes: ``nnabla.prefer_cached_array``,
    which also orders the other backends' classes; a class chosen by another ``prefer_*``
    function of this module no longer comes first."""
    import nnabla
    nnabla.prefer_cached_array(prefer)
    _preferred["name"] = None
    from . import memory
    memory.use_array_class(array_classes()[0])


def prefer_cuda_cached_array():
    """New contexts store arrays in ``CudaCachedArray`` (CuPy's memory pool)."""
    _prefer("CudaCachedArray")


def prefer_unified_array():
    """New contexts store arrays in ``CudaCachedUnifiedArray`` (managed memory)."""
    _prefer("CudaCachedUnifiedArray")


def prefer_cpu_pinned_array():
    """New contexts store arrays in ``CudaCachedHostArray`` (pinned host memory pool)."""
    _prefer("CudaCachedHostArray")


def reset_array_preference():
    """Back to nnabla's default order (``CudaCachedArray`` first): forgets this module's
    ``prefer_*`` choice and ``nnabla.prefer_cached_array`` (``nnabla.reset_array_preference``)."""
    import nnabla
    nnabla.reset_array_preference()
    _preferred["name"] = None
    from . import memory
    memory.use_array_class(array_classes()[0])


def __getattr__(name):
    """``StreamEventHandler`` and ``Event`` of :mod:`.init`, as nnabla's module offers them
    (imported on first use: the module imports this one)."""
    if name in ("StreamEventHandler", "Event"):
        from . import init
        return getattr(init, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
