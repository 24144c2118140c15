"""``nnabla.function_bases``: the functions exactly as the spec table defines them.

``nnabla.functions`` wraps some of these in Python adapters (extra conveniences,
argument forms nnabla's Python layer accepts); here every function is the plain
spec-generated one, whose graph node carries the function's own type name.

Example:
    >>> import nnabla.function_bases as FB
    >>> FB.patch_correlation.__name__
    'patch_correlation'
"""
from .functions import BASES as _BASES

globals().update(_BASES)
__all__ = sorted(_BASES)
