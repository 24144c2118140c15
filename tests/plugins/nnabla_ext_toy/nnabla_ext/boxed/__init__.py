"""``boxed``: a test device backend whose arrays are not numpy and refuse numpy conversion.

A :class:`Box` holds a numpy array privately (as a device array holds device memory);
``numpy.asarray(box)`` raises, like CuPy's arrays. Every transfer between the host and the
device goes through the family's ``to_numpy``/``from_numpy`` and is counted in
:data:`TRANSFERS`, so tests can assert that a training step makes none. Its kernels and
solver rules run the CPU plugin's on the boxed values, so results equal the CPU's.
"""
from __future__ import annotations

__version__ = "0.1.0"
TRANSFERS = {"to_host": 0, "to_device": 0}


class Box:
    """A device array of the ``boxed`` family."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)

    def __array__(self, *args, **kwargs):
        raise TypeError("a boxed device array cannot be converted to numpy implicitly; "
                        "use the family's to_numpy")

    def __repr__(self):
        return f"Box(shape={self.shape}, dtype={self.dtype})"


def reset_transfers():
    TRANSFERS.update(to_host=0, to_device=0)


def context(device_id="0", type_config="float", **kw):
    """The context of the boxed device (falls back to the CPU where it has no kernel)."""
    from nnabla import Context
    return Context(backend=[f"boxed:{type_config}", f"cpu:{type_config}"],
                   array_class="BoxedArray", device_id=str(device_id))


def get_devices():
    return ["0"]


def get_device_count():
    """Number of devices of the boxed backend (one), as nnabla's extension modules give."""
    return len(get_devices())


def device_synchronize(device_id="0"):
    """Kernels run synchronously: nothing to wait for."""


def clear_memory_cache():
    """The boxed device keeps no cache."""
