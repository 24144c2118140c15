"""``nnabla.function_bases``: every function type with its type-level signature.

``nnabla.functions`` re-exports these, replacing some with Python adapters whose
signature differs (``F.sum(x, axis, keepdims)`` over ``Sum(axes, keep_dims)``);
this module keeps the spec-generated originals.
"""
from __future__ import annotations

from .functions import BASES as _BASES

globals().update(_BASES)
__all__ = sorted(_BASES)
