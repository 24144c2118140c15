"""Reaching NCCL: the library from the ``nvidia-nccl-cu13`` wheel, CuPy's bindings, a GPU.

CuPy's ``cupy.cuda.nccl`` binds ``libnccl.so.2`` when first imported; the wheel puts the
library in ``site-packages/nvidia/nccl/lib``, which the dynamic loader does not search, so
:func:`bindings` loads it first (``RTLD_GLOBAL``), then imports the bindings. Every failure
becomes a :class:`~nnabla_comm_nccl.NcclUnavailableError` naming the cause and the fix.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os

from . import NcclUnavailableError

INSTALL_HINT = "pip install nnabla-comm-nccl (it installs nvidia-nccl-cu13 and mpi4py)"
_bindings = None


def library_path():
    """The path of ``libnccl.so.2`` in the ``nvidia-nccl-cu13`` wheel, or None."""
    try:
        spec = importlib.util.find_spec("nvidia.nccl")
    except (ImportError, ValueError):
        return None
    for folder in list(getattr(spec, "submodule_search_locations", None) or []):
        path = os.path.join(folder, "lib", "libnccl.so.2")
        if os.path.exists(path):
            return path
    return None


def bindings():
    """CuPy's ``cupy.cuda.nccl`` with the library loaded (cached).

    Raises:
        NcclUnavailableError: CuPy, the library or the bindings cannot be loaded.
    """
    global _bindings
    if _bindings is not None:
        return _bindings
    path = library_path()
    if path is not None:
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            raise NcclUnavailableError(f"cannot load NCCL from {path}: {e}") from None
    try:
        from cupy.cuda import nccl
    except Exception as e:  # noqa: BLE001 - a broken CuPy raises anything
        raise NcclUnavailableError(f"CuPy cannot be imported ({type(e).__name__}: {e}); "
                                   "pip install cupy-cuda13x") from None
    if not getattr(nccl, "available", False):
        where = path or "no nvidia-nccl-cu13 wheel found"
        raise NcclUnavailableError(f"CuPy's NCCL bindings cannot load libnccl.so.2 ({where}); "
                                   f"{INSTALL_HINT}")
    _bindings = nccl
    return nccl


def check():
    """A one-line description of the NCCL setup; raises NcclUnavailableError with the
    reason when a GPU, NCCL or mpi4py is missing (the numpy emulation of CUDA has no GPU)."""
    if importlib.util.find_spec("mpi4py") is None:
        raise NcclUnavailableError("mpi4py is not installed (the NCCL unique id travels over "
                                   f"MPI); {INSTALL_HINT}")
    from nnabla_ext.cuda._device import CudaUnavailableError, runtime
    try:
        rt = runtime()
    except CudaUnavailableError as e:
        raise NcclUnavailableError(f"no usable GPU: {e}") from None
    if rt.emulated:
        raise NcclUnavailableError("the CUDA backend runs on the numpy emulation "
                                   "(NNABLA_CUDA_EMULATE=1), which has no GPU for NCCL")
    nccl = bindings()
    version = nccl.get_version()
    return (f"NCCL {version // 10000}.{version // 100 % 100}.{version % 100} through CuPy "
            f"{rt.cupy.__version__}, {rt.device_count} device(s)")
