"""``nnabla.function_bases``: the functions exactly as the spec table defines them.

``nnabla.functions`` wraps some of these in Python adapters (extra conveniences,
argument forms nnabla's Python layer accepts); here every function is the plain
spec-generated one, whose graph node carries the function's own type name.

Example:
    >>> import nnabla.function_bases as FB
    >>> FB.patch_correlation.__name__
    'patch_correlation'
"""
from ._function_wrappers import make_wrapper as _make_wrapper
from ._spec import SPECS as _SPECS

BASES = {spec.snake: _make_wrapper(spec) for spec in _SPECS.values()}
globals().update(BASES)
__all__ = sorted(BASES)
