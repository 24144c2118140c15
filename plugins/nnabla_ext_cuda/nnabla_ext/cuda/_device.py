"""The device layer: CuPy on a GPU, or the numpy emulation; and why CUDA is unavailable.

Nothing here runs at ``import nnabla``: the plugin calls :func:`runtime` when the ``cuda``
backend is activated (its first use), so a machine without CuPy, a driver or a device keeps
a working ``nnabla`` and a clear reason.

``NNABLA_CUDA_EMULATE=1`` selects :mod:`nnabla_ext.cuda.emulation` (numpy standing in for
CuPy) instead of CuPy; it is read once, at activation.
"""
from __future__ import annotations

import os
import threading

EMULATE_ENV = "NNABLA_CUDA_EMULATE"
CHECK_HINT = ("check the driver and the devices with `nvidia-smi`, the CuPy install with "
              "`python -c \"import cupy; cupy.show_config()\"`")


class CudaUnavailableError(ImportError, RuntimeError):
    """The CUDA backend cannot run here; the message says why and how to check.

    An ImportError too, as nnabla's CUDA extension raises on a machine where it cannot run:
    code written for nnabla (``try: ctx = nnabla_ext.cudnn.context() except ImportError:``
    fall back to the CPU) keeps working."""


class Runtime:
    """The array library the backend runs on.

    Attributes:
        cupy: the ``cupy`` module, or the emulation's namespace.
        emulated (bool): numpy stands in for CuPy.
        device_count (int): devices visible to the process.
    """

    def __init__(self, cupy, emulated, device_count):
        self.cupy, self.emulated, self.device_count = cupy, emulated, device_count

    def __repr__(self):
        kind = "emulation (numpy)" if self.emulated else f"CuPy {self.cupy.__version__}"
        return f"Runtime({kind}, devices={self.device_count})"


_lock = threading.Lock()
_runtime = None


def emulation_requested():
    return os.environ.get(EMULATE_ENV, "") not in ("", "0")


def runtime():
    """The :class:`Runtime`, chosen once; raises :class:`CudaUnavailableError` with the
    reason when there is neither an emulation request nor a usable device."""
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = _emulation() if emulation_requested() else _probe_cupy()
        return _runtime


def _emulation():
    from ._host_cuda import device_count
    from .emulation import cupy
    return Runtime(cupy, True, device_count())


def _probe_cupy():
    try:
        import cupy
    except ImportError as e:
        raise CudaUnavailableError(
            f"CuPy cannot be imported ({e}); install it with `pip install 'cupy-cuda13x[ctk]'` "
            f"(nnabla-ext-cuda declares it), or set {EMULATE_ENV}=1 to run on the numpy "
            "emulation") from None
    except Exception as e:  # noqa: BLE001 - a broken CuPy install raises anything
        raise CudaUnavailableError(f"CuPy failed to import: {type(e).__name__}: {e}; "
                                   f"{CHECK_HINT}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CUDARuntimeError and driver-loading errors
        raise CudaUnavailableError(f"no usable CUDA driver: {e}; {CHECK_HINT}") from None
    if count < 1:
        raise CudaUnavailableError(f"no CUDA device found; {CHECK_HINT}")
    return Runtime(cupy, False, count)


def status():
    """``(available, reason)`` without raising; ``reason`` is ``''`` when available."""
    try:
        runtime()
    except CudaUnavailableError as e:
        return False, str(e)
    return True, ""


def reset_for_tests():
    """Forget the chosen runtime (tests switch between emulation and the probe)."""
    global _runtime
    with _lock:
        _runtime = None
