"""Array-class preference: which array class of a backend new arrays prefer.

nnabla keeps, per backend, an ordered list of array class names; ``prefer_cached_array``
moves the memory-pooled ("Cached") classes to the front (or the back), keeping the order
within each group, and ``reset_array_preference`` restores the order the backend declared.
Here each backend declares its list in its plugin's ``Extension.array_classes``.
"""
from __future__ import annotations

from ._state import STATE
from .array_family import HOST_FAMILY
from .plugins import REGISTRY


def _declared(backend):
    entry = REGISTRY.extensions.get(backend)
    if entry is None:
        raise ValueError(f"nnabla.array_classes: no installed backend {backend!r} "
                         f"(installed: {sorted(REGISTRY.extensions)})")
    return list(entry[0].array_classes)


def _ordered(names):
    prefer = STATE.prefer_cached_array
    if prefer is None:
        return list(names)
    # stable: the preferred group first, each group in its declared order
    return sorted(names, key=lambda name: bool(prefer) != ("Cached" in name))


def array_classes(backend=None):
    """The array class names of ``backend`` in order of preference.

    Args:
        backend (str, optional): a backend name (``'cpu'``, ``'cuda'``); default: the
            backend whose arrays live in host memory, as nnabla's ``array_classes()``.

    Returns:
        list of str

    Example:
        >>> import nnabla as nn
        >>> nn.prefer_cached_array(False)
        >>> nn.array_classes()
        ['CpuArray', 'CpuCachedArray']
        >>> nn.prefer_cached_array(True)
    """
    if backend is None:
        hosts = [name for name, (ext, _) in REGISTRY.extensions.items()
                 if ext.family == HOST_FAMILY]
        if not hosts:
            return []
        backend = hosts[0]
    return _ordered(_declared(backend))


def prefer_cached_array(prefer):
    """Prefer (True) or avoid (False) the memory-pooled array classes of every backend."""
    STATE.prefer_cached_array = bool(prefer)


def reset_array_preference():
    """Forget :func:`prefer_cached_array`: each backend's declared order applies again."""
    STATE.prefer_cached_array = None
