"""The CPU kernel table: spec type name -> kernel class.

``GENERIC`` holds kernels written against ``self.xp``, the bound family's namespace, using
numpy's API (not only the array-API subset: ``take_along_axis``, ``add.at``,
``astype(copy=False)``...), so a backend whose namespace follows numpy (CuPy) reuses them
as they are; this table is the plugin's public API for that. ``CPU_KERNELS`` starts from it
and overrides entries with native (C++) kernels where a benchmark showed numpy to be slow.
"""
from __future__ import annotations

import importlib

CATEGORY_MODULES = (
    "arithmetic", "math", "activation", "neural_network", "normalization", "reduction",
    "array", "loss", "logical", "stochastic", "validation", "recurrent", "nn_advanced",
    "array_extra", "normalization_extra",
    "signal", "resize", "geometry",
    "quantization", "misc",
)


# Kernels of these families keep no state from forward to backward (only what setup()
# derives from arguments and shapes), so one instance may serve every call with the same
# shapes and arguments: the engine then skips re-creating it in imperative/dynamic code.
STATELESS_MODULES = ("arithmetic", "math", "activation", "logical")


def _collect():
    table = {}
    for name in CATEGORY_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        if name in STATELESS_MODULES:
            for cls in module.KERNELS.values():
                cls.shareable = True
        table.update(module.KERNELS)
    return table


GENERIC = _collect()


def _native_overrides():
    try:
        from . import native
    except ImportError:   # the compiled module is missing: stay on the generic kernels
        return {}
    from . import native_recurrent, onednn  # onednn: convolutions; each falls back to native's
    return {**native.KERNELS, **native_recurrent.KERNELS, **onednn.KERNELS}


CPU_KERNELS = {**GENERIC, **_native_overrides()}
