"""The CPU kernel table: spec type name -> kernel class.

``GENERIC`` holds kernels written against ``xp`` (reusable by any array-API
backend); ``CPU_KERNELS`` starts from it and overrides entries with native
(C++) kernels where a benchmark showed numpy to be slow.
"""
from __future__ import annotations

import importlib

CATEGORY_MODULES = (
    "arithmetic", "math", "activation", "neural_network", "normalization", "reduction",
    "array", "loss", "logical", "stochastic", "validation",
)


def _collect():
    table = {}
    for name in CATEGORY_MODULES:
        try:
            module = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            continue
        table.update(module.KERNELS)
    return table


GENERIC = _collect()


def _native_overrides():
    try:
        from . import native
    except ImportError:   # the compiled module is missing: stay on the generic kernels
        return {}
    return native.KERNELS


CPU_KERNELS = {**GENERIC, **_native_overrides()}
