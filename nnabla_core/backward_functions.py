"""``nnabla.backward_functions``: the backward pass of each function, as functions.

``registry[type_name]`` is a callable
``(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args)`` that
builds the gradients w.r.t. the inputs out of ``nnabla.functions`` calls, so the
result is itself differentiable (``nn.grad`` to second order and beyond).
Entries live in ``nnabla/backward_function/<category>.py`` as ``BACKWARDS``
dicts and are loaded on first use. A function without an entry still gets a
first-order gradient from :mod:`nnabla._kernel_grad`, whose own backward raises.
"""
from __future__ import annotations

import importlib
import pkgutil


class _Registry(dict):
    """A dict of backward functions that imports its entries on first access."""

    _loaded = False

    def _load(self):
        if self._loaded:
            return
        self._loaded = True
        from . import backward_function as package
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_"):
                continue
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, fn in getattr(module, "BACKWARDS", {}).items():
                if name in self:
                    raise ValueError(f"backward of {name} is registered twice")
                dict.__setitem__(self, name, fn)

    def __getitem__(self, key):
        self._load()
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        self._load()
        return dict.__contains__(self, key)

    def get(self, key, default=None):
        self._load()
        return dict.get(self, key, default)

    def keys(self):
        self._load()
        return dict.keys(self)

    def __iter__(self):
        self._load()
        return dict.__iter__(self)

    def __len__(self):
        self._load()
        return dict.__len__(self)


registry = _Registry()


def register(type_name, func):
    """Register (or replace) the backward function of ``type_name``."""
    registry._load()
    dict.__setitem__(registry, type_name, func)
