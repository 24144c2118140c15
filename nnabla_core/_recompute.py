"""``nn.recompute`` / ``nn.recompute_fn``: mark the variables built in a scope for
recomputation.

A variable with ``recompute=True`` may have its data released during forward (with
``clear_no_need_grad`` or ``clear_buffer``); backward rebuilds it by re-running the
functions that produced it. New variables take the process-wide flag
(``nn.set_global_recompute``) when they are created; these helpers set it for a block.
"""
from __future__ import annotations

import contextlib
import functools

from ._runtime_flags import set_global_recompute
from ._state import STATE


def get_global_recompute():
    """The ``recompute`` flag new variables get."""
    return STATE.global_recompute


@contextlib.contextmanager
def recompute(recompute_=True):
    """Variables created inside the block get ``recompute=recompute_``; blocks nest.

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable((2,))
        >>> with nn.recompute():
        ...     y = F.sin(x)
        ...     with nn.recompute(False):
        ...         z = F.cos(y)
        >>> y.recompute, z.recompute, nn.get_global_recompute()
        (True, False, False)
    """
    previous = STATE.global_recompute
    set_global_recompute(recompute_)
    try:
        yield
    finally:
        set_global_recompute(previous)


def recompute_fn(recompute_=True):
    """Decorator: the variables a call of the function creates get ``recompute=recompute_``.

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> @nn.recompute_fn()
        ... def block(x):
        ...     return F.relu(x)
        >>> block(nn.Variable((2,))).recompute
        True
    """
    def decorator(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with recompute(recompute_):
                return func(*args, **kwargs)
        return wrapper
    return decorator
