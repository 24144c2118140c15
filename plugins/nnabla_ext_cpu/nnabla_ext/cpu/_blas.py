"""One thread pool for numpy's OpenBLAS and the native loops.

OpenBLAS 0.3.27 and later accept a callback that runs its parallel jobs
(``openblas_set_threads_callback_function``). :func:`install` gives every OpenBLAS
loaded in this process (numpy's, found in ``/proc/self/maps`` or next to numpy) the
callback of ``nnabla_ext.cpu._native``, which runs the jobs on the OpenMP team of the
native loops. Matrix products and native loops then share one set of threads and
neither waits for the other's spinning workers, so the native loops can use every core
too. Where no such OpenBLAS is found (another BLAS, an older OpenBLAS), nothing changes
and the native loops keep one thread (see ``kernels/native.py``).
"""
from __future__ import annotations

import ctypes
import glob
import os

_PREFIXES = ("", "scipy_")
_SUFFIXES = ("", "64_", "_64")

_installed = []     # (path, library, set_num_threads or None)


def _symbol(library, name):
    """``name`` in ``library`` under one of the prefixes/suffixes numpy's builds use."""
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            try:
                return getattr(library, prefix + name + suffix)
            except AttributeError:
                continue
    return None


def _candidate_paths():
    """Paths of the OpenBLAS libraries mapped into this process, numpy's first."""
    paths = []
    try:
        import numpy
        root = os.path.dirname(os.path.dirname(numpy.__file__))
        paths += sorted(glob.glob(os.path.join(root, "numpy.libs", "*openblas*.so*")))
    except ImportError:                      # pragma: no cover - numpy is a dependency
        pass
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and "openblas" in os.path.basename(parts[5]).lower():
                    paths.append(parts[5].strip())
    except OSError:                          # no procfs (not Linux): numpy's copy only
        pass
    seen, unique = set(), []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and os.path.exists(real):
            seen.add(real)
            unique.append(real)
    return unique


def install(native):
    """Route the parallel jobs of every OpenBLAS found to ``native``'s thread team.

    Returns the paths of the libraries that took the callback (empty when none did, or
    when ``NNABLA_CPU_SHARED_BLAS_POOL=0`` asks to leave OpenBLAS's threads alone).
    Idempotent.
    """
    if _installed:
        return [path for path, _, _ in _installed]
    if os.environ.get("NNABLA_CPU_SHARED_BLAS_POOL", "").strip() == "0":
        return []
    address = native.blas_callback_address()
    for path in _candidate_paths():
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        setter = _symbol(library, "openblas_set_threads_callback_function")
        if setter is None:
            continue
        setter.argtypes = [ctypes.c_void_p]
        setter.restype = None
        setter(address)
        set_threads = _symbol(library, "openblas_set_num_threads")
        if set_threads is not None:
            set_threads.argtypes = [ctypes.c_int]
            set_threads.restype = None
        _installed.append((path, library, set_threads))
    return [path for path, _, _ in _installed]


def installed():
    """Paths of the OpenBLAS libraries whose jobs run on the native team."""
    return [path for path, _, _ in _installed]


def set_num_threads(n):
    """Give every OpenBLAS that took the callback ``n`` threads (jobs per product)."""
    for _, _, set_threads in _installed:
        if set_threads is not None:
            set_threads(int(n))
