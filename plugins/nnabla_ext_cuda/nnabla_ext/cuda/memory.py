"""Which allocator CUDA arrays come from, by nnabla's array class names.

CuPy allocates every device array through one process-wide allocator, so an array class
choice (``prefer_*`` in :mod:`nnabla_ext.cuda`) selects that allocator:

- ``CudaCachedArray`` (default): CuPy's caching memory pool (``cupy.get_default_memory_pool``);
  freed blocks are kept for reuse until :func:`nnabla_ext.cuda.clear_memory_cache`.
- ``CudaArray``: no pool; every array is a ``cudaMalloc`` of its own.
- ``CudaCachedUnifiedArray``: a pool over managed (unified) memory (``cudaMallocManaged``).
- ``CudaCachedHostArray``: device arrays from the default pool; host transfers use CuPy's
  pinned-memory pool (the only pinned memory CuPy manages).

The choice is applied when the backend is active (at once if it already is).
"""
from __future__ import annotations

ARRAY_CLASSES = ("CudaCachedArray", "CudaArray", "CudaCachedUnifiedArray",
                 "CudaCachedHostArray")
_state = {"array_class": "CudaCachedArray", "applied": None}


def use_array_class(name):
    """Select the allocator of array class ``name`` (applied now if the backend is active)."""
    if name not in ARRAY_CLASSES:
        raise ValueError(f"nnabla_ext.cuda.memory.use_array_class: argument 'name' is "
                         f"{name!r}; expected one of {list(ARRAY_CLASSES)}")
    _state["array_class"] = name
    from . import _device
    if _device._runtime is not None:
        apply(_device._runtime)


def apply(runtime):
    """Install the selected allocator in ``runtime`` (called at activation)."""
    cp = runtime.cupy
    name = _state["array_class"]
    if name == "CudaArray":
        cp.cuda.set_allocator(None)
    elif name == "CudaCachedUnifiedArray":
        cp.cuda.set_allocator(_unified_pool(cp).malloc)
    else:
        cp.cuda.set_allocator(cp.get_default_memory_pool().malloc)
    _state["applied"] = name
    return name


_unified = {}


def _unified_pool(cp):
    if "pool" not in _unified:
        _unified["pool"] = cp.cuda.MemoryPool(cp.cuda.malloc_managed)
    return _unified["pool"]


def current():
    """The array class whose allocator is installed (``None`` before activation)."""
    return _state["applied"]
