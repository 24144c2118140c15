"""``nnabla.functions``: every function of the spec table, plus Python-level adapters.

Functions accept ``Variable`` (building a graph, or running at once under
auto-forward) or ``NdArray`` (running at once, returning ``NdArray``).
"""
from __future__ import annotations

from . import function_bases as _function_bases
from ._adapters import checked as _checked
from ._modules import category_modules as _category_modules
from ._spec import CATEGORY_MODULES as _CATEGORIES

BASES = _function_bases.BASES   # the spec-generated functions, before adapters replace some
__all__ = list(BASES)
globals().update(BASES)

# "composite": F members built from other F calls, with no spec category of their own.
# An adapter that fails checks its array inputs first, to name the one that is not an array.
for _category, _module in _category_modules("nnabla._adapters", _CATEGORIES + ("composite",)):
    for _name in getattr(_module, "__all__", ()):
        globals()[_name] = _checked(getattr(_module, _name))
        if _name not in __all__:
            __all__.append(_name)

del _category, _module
