"""The ``cuda`` array family: CuPy device arrays (or the emulation's), as the core sees them.

One family object per device: the engine binds a context's kernels and solvers to
``family.for_device(ctx.device_id)``, so a context with ``device_id='1'`` allocates and
computes on device 1, and its arrays are heads of their own (an array read on another
device is copied device to device). Memory comes from CuPy's allocator, whose pools are
per device.
"""
from __future__ import annotations

from nnabla.array_family import ArrayFamily

from ._namespace import DeviceNamespace

FAMILY_NAME = "cuda"


def _cupy_owner(a):
    # views of one allocation share its Memory object (MemoryPointer.mem)
    return a.data.mem


def _emulated_owner(a):
    base = a._a.base
    return a._a if base is None else base


def _on(index, current, device, function):
    """``function`` run with device ``index`` current (entered only when it is not)."""
    def run(*args):
        if current() == index:
            return function(*args)
        with device(index):
            return function(*args)
    run.__name__ = getattr(function, "__name__", "run")
    return run


class CudaFamily(ArrayFamily):
    """The ``cuda`` family of one device (``device_index``); see :func:`make_family`."""

    def __init__(self, runtime, device_index, devices):
        cp = runtime.cupy
        self.runtime, self.device_index, self._devices = runtime, device_index, devices
        xp = DeviceNamespace(cp, device_index)
        current, device = cp.cuda.runtime.getDevice, cp.cuda.Device

        def on(function):
            return _on(device_index, current, device, function)

        super().__init__(
            FAMILY_NAME, array_type=cp.ndarray, xp=xp, to_numpy=cp.asnumpy,
            from_numpy=on(cp.array),
            zeros=on(lambda shape, dtype: cp.zeros(shape, dtype)),
            full=on(lambda shape, value, dtype: cp.full(shape, value, dtype)),
            asarray=on(lambda a: cp.asarray(a)),
            astype=on(lambda a, dtype: a.astype(dtype)),
            copy=on(lambda a: a.copy()),
            reshape=on(lambda a, shape: a.reshape(shape)),
            add=on(lambda a, b: a + b),
            iadd=on(_iadd),
            owner=_emulated_owner if runtime.emulated else _cupy_owner)
        self._copy_here = on(_copy_as)

    def for_device(self, device_id):
        """The family of device ``device_id`` (``''`` and ``'0'``: device 0)."""
        key = str(device_id)
        fam = self._devices.get(key)
        if fam is None:
            try:
                index = int(key) if key else 0
            except ValueError:
                raise ValueError(f"cuda backend: context device_id is {device_id!r}; "
                                 "expected a device index ('0', '1', ...)") from None
            count = self.runtime.device_count
            if not 0 <= index < count:
                raise ValueError(f"cuda backend: context device_id is {device_id!r}; this "
                                 f"machine has {count} CUDA device(s) (ids 0..{count - 1})")
            fam = self._devices.get(str(index))
            if fam is None:
                fam = CudaFamily(self.runtime, index, self._devices)
                self._devices[str(index)] = fam
            self._devices[key] = fam
        return fam

    def convert(self, arr, source, dtype):
        """``arr`` in ``dtype`` on this family's device; from another device of the same
        runtime by a device-to-device copy (CuPy copies to the current device)."""
        if isinstance(source, CudaFamily) and source is not self \
                and source.runtime is self.runtime:
            return self._copy_here(arr, dtype)
        return super().convert(arr, source, dtype)

    def __repr__(self):
        return f"ArrayFamily({self.name!r}, device {self.device_index})"


def _iadd(a, b):
    a += b
    return a


def _copy_as(a, dtype):
    y = a.copy()
    return y if y.dtype == dtype else y.astype(dtype)


def make_family(runtime):
    """The :class:`~nnabla.array_family.ArrayFamily` of ``runtime``'s arrays on device 0;
    ``for_device(i)`` gives device ``i``'s.

    Kernels get ``xp``, a :class:`~._namespace.DeviceNamespace` over ``cupy`` for the
    family's device. Host transfers go through ``cupy.asnumpy`` and ``cupy.array`` (copies);
    everything else is the default call on ``cupy`` or on the array (``cupy.zeros``,
    ``a.astype``), with the family's device current.
    """
    devices = {}
    fam = devices["0"] = devices[""] = CudaFamily(runtime, 0, devices)
    return fam
