"""The CPU backend's caching allocator for numpy arrays (nnabla's ``CpuCachedArray``).

Arrays of at least 64 KiB are mapped from the OS and, when freed, kept in a bounded,
size-ordered free list; the next array of a similar size reuses a cached block instead
of mapping and faulting in fresh pages (see ``src/cached_allocator.h``). Smaller arrays
go to numpy's own allocator. The allocator is numpy's memory-handler API
(``PyDataMem_SetHandler``), so it serves every numpy allocation made while it is
installed, not only the kernels' arrays; each array remembers the allocator that made it.

It is off by default (:data:`DEFAULT_ENABLED`): glibc's heap already reuses freed
blocks, and on the benchmarks the cache was no faster and raised peak RSS (ResNet-18
inference 173 against 133 MiB; ``benchmarks/README.md``). ``NNABLA_CPU_CACHED_ALLOCATOR=1``
installs it when the backend's kernels load, ``0`` keeps it off; :func:`install` and
:func:`uninstall` switch it at run time. Like ``PyDataMem_SetHandler``, installing
applies to the calling thread's context; other threads keep numpy's allocator.
"""
from __future__ import annotations

import os

from . import _native

ENV = "NNABLA_CPU_CACHED_ALLOCATOR"
DEFAULT_ENABLED = False
MIN_CACHED_BYTES = _native.CACHE_MIN_BYTES   # smaller arrays go to numpy's allocator


def enabled_by_environment(environ=os.environ):
    """Whether ``NNABLA_CPU_CACHED_ALLOCATOR`` (or the default) asks for the cache.

    Raises:
        ValueError: the variable is set to something other than ``0`` or ``1``.
    """
    value = environ.get(ENV, "").strip()
    if value == "":
        return DEFAULT_ENABLED
    if value not in ("0", "1"):
        raise ValueError(f"environment variable {ENV} is {value!r}; expected '0' or '1'")
    return value == "1"


def install_from_environment():
    """Install the caching allocator if ``NNABLA_CPU_CACHED_ALLOCATOR`` (or the default) says so."""
    if enabled_by_environment():
        _native.install_cached_allocator()


def install():
    """Allocate numpy arrays through the cache from now on (this thread's context)."""
    _native.install_cached_allocator()


def uninstall():
    """Allocate new numpy arrays with the allocator found before the first install."""
    _native.uninstall_cached_allocator()


def clear():
    """Return every cached block to the OS; arrays in use are not affected."""
    _native.clear_memory_cache()


def stats():
    """Counters of the cache: a dict with ``in_use``, ``cached`` (bytes of large blocks
    held by arrays and kept for reuse), ``hits``, ``misses`` (large requests served from
    the cache or mapped anew), ``limit`` (the bound on ``cached``) and ``installed``."""
    return _native.memory_cache_stats()
