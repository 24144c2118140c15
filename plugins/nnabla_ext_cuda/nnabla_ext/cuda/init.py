"""``nnabla_ext.cuda.init``: the module of nnabla's CUDA extension by that name, on CuPy.

nnabla and its users import it directly (``import nnabla_ext.cuda.init as cuda_init``,
``cuda_init.prefer_cpu_pinned_array()``, ``from nnabla_ext.cuda.init import
StreamEventHandler``). It offers the same names:

- memory: :func:`clear_memory_cache`, :func:`print_memory_cache_map`,
  :func:`get_caching_allocator_fragmentation_bytes`, :func:`get_device_memory_size`;
- array preference: :func:`array_classes`, :func:`prefer_cached_array`,
  :func:`reset_array_preference`, :func:`prefer_cuda_cached_array`,
  :func:`prefer_unified_array`, :func:`prefer_cpu_pinned_array`;
  :func:`prefer_cuda_virtual_array`, :func:`set_cuda_virtual_memory_chunk_size` and
  :func:`clear_virtual_memory_cache` concern nnabla's virtual-memory allocator, which CuPy
  does not have: the first two raise saying so, the last has nothing to clear;
- runtime: :func:`device_synchronize`, :func:`get_device_count`, :func:`get_devices`;
- :class:`Event` and :class:`StreamEventHandler` over CuPy's events and streams.

Example:
    >>> import nnabla_ext.cuda.init as cuda_init
    >>> callable(cuda_init.StreamEventHandler)
    True
"""
from __future__ import annotations

from . import (array_classes, clear_memory_cache, get_device_count, get_devices,
               prefer_cached_array, prefer_cpu_pinned_array, prefer_cuda_cached_array,
               prefer_unified_array, reset_array_preference)

__all__ = ["array_classes", "clear_memory_cache", "clear_virtual_memory_cache",
           "device_synchronize", "get_device_count", "get_devices", "get_device_memory_size",
           "get_caching_allocator_fragmentation_bytes", "print_memory_cache_map",
           "prefer_cached_array", "prefer_cpu_pinned_array", "prefer_cuda_cached_array",
           "prefer_cuda_virtual_array", "prefer_unified_array", "reset_array_preference",
           "set_cuda_virtual_memory_chunk_size", "Event", "StreamEventHandler"]

_NO_VIRTUAL = ("CuPy has no virtual-memory (cuMemMap) allocator, so nnabla-ext-cuda offers "
               "no CudaCachedVirtualArray; to cut fragmentation use prefer_cuda_cached_array() "
               "(a caching pool) or prefer_unified_array() (managed memory)")


def _cupy():
    import nnabla_ext.cuda
    return nnabla_ext.cuda.runtime().cupy


def device_synchronize(device):
    """``cudaDeviceSynchronize`` on ``device`` (a device id such as ``'0'``)."""
    from . import device_synchronize as synchronize
    synchronize(str(device))


def get_device_memory_size():
    """``[free, total]`` bytes of the current device (``cudaMemGetInfo``)."""
    return list(_cupy().cuda.runtime.memGetInfo())


def get_caching_allocator_fragmentation_bytes(device_id):
    """Bytes the caching pool of device ``device_id`` holds but no array uses."""
    cp = _cupy()
    with cp.cuda.Device(int(device_id)):
        return int(cp.get_default_memory_pool().free_bytes())


def print_memory_cache_map():
    """Print the caching pool's usage per device (used, held, free blocks)."""
    cp = _cupy()
    for device in get_devices():
        with cp.cuda.Device(int(device)):
            pool = cp.get_default_memory_pool()
            print(f"device {device}: {pool.used_bytes()} bytes used, {pool.total_bytes()} "
                  f"bytes held, {pool.n_free_blocks()} free blocks")


def clear_virtual_memory_cache():
    """Nothing to clear: no virtual-memory allocator exists on CuPy (see the module doc)."""


def prefer_cuda_virtual_array():
    """Raises :class:`NotImplementedError`: CuPy has no virtual-memory allocator."""
    raise NotImplementedError(f"nnabla_ext.cuda.init.prefer_cuda_virtual_array: {_NO_VIRTUAL}")


def set_cuda_virtual_memory_chunk_size(size):
    """Raises :class:`NotImplementedError`: CuPy has no virtual-memory allocator."""
    raise NotImplementedError(f"nnabla_ext.cuda.init.set_cuda_virtual_memory_chunk_size: "
                              f"{_NO_VIRTUAL}")


class Event:
    """A CUDA event on device ``device_id`` (``cudaEventDefault``: timing enabled)."""

    def __init__(self, device_id):
        cp = _cupy()
        self.device_id = int(device_id)
        with cp.cuda.Device(self.device_id):
            self._event = cp.cuda.Event()

    def record(self):
        """Record the event on the current stream."""
        self._event.record()

    def synchronize(self):
        """Wait until the event has completed."""
        self._event.synchronize()

    def elapsed(self, start_event):
        """Milliseconds from ``start_event`` to this event."""
        return _cupy().cuda.get_elapsed_time(start_event._event, self._event)


class StreamEventHandler:
    """A non-blocking stream of its own and an event, as nnabla's data transfers use them.

    Attributes:
        value (int): the stream's handle (``cudaStream_t`` as an integer).
        device_id (int): the device (``-1``: the current one).
        is_stream_destroy (bool): whether the stream is destroyed.
    """

    def __init__(self, device_id=-1):
        self.device_id = int(device_id)
        self.is_stream_destroy = True
        self.stream = None
        self.stream_create(self.device_id)
        self._event = self._in_device(lambda cp: cp.cuda.Event(disable_timing=True))
        self.add_default_stream_event()

    def _in_device(self, make):
        cp = _cupy()
        if self.device_id < 0:
            return make(cp)
        with cp.cuda.Device(self.device_id):
            return make(cp)

    def stream_create(self, device_id):
        """A new non-blocking stream (the previous one is destroyed)."""
        if not self.is_stream_destroy:
            self.stream_destroy()
        self.device_id = int(device_id)
        self.stream = self._in_device(lambda cp: cp.cuda.Stream(non_blocking=True))
        self.value = int(self.stream.ptr)
        self.is_stream_destroy = False

    def stream_destroy(self):
        """Drop the stream (CuPy destroys it when no longer referenced)."""
        self.stream = None
        self.is_stream_destroy = True

    def add_default_stream_event(self):
        """Record the event on the default (null) stream."""
        self._event.record(_cupy().cuda.Stream.null)

    def stream_wait_event(self):
        """Make the handler's stream wait for the event."""
        if not self.is_stream_destroy:
            self.stream.wait_event(self._event)

    def event_synchronize(self):
        """Wait until the event has completed."""
        self._event.synchronize()

    def stream_synchronize(self):
        """Wait for the handler's stream."""
        if not self.is_stream_destroy:
            self.stream.synchronize()

    def default_stream_synchronize(self):
        """Wait for the default (null) stream."""
        _cupy().cuda.Stream.null.synchronize()
