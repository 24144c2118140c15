"""Contexts: which backends (and type configs) functions run on."""
from __future__ import annotations

import contextlib

from ._state import STATE


class Context:
    """Where and in which precision functions run.

    Args:
        backend (list of str): backends in priority order, each ``'name:type_config'``
            (e.g. ``['cudnn:half', 'cuda:half', 'cpu:half']``). Default ``['cpu:float']``.
        array_class (str): the array class outputs are stored in (``'CpuCachedArray'``).
        device_id (str): device index as a string.
    """

    __slots__ = ("backend", "array_class", "device_id")

    def __init__(self, backend=None, array_class="", device_id="0"):
        if backend is None:
            backend = ["cpu:float"]
        if isinstance(backend, str):
            backend = [backend]
        self.backend = list(backend)
        self.array_class = array_class
        self.device_id = str(device_id)

    def _key(self):
        return (tuple(self.backend), self.array_class, self.device_id)

    def __eq__(self, other):
        return isinstance(other, Context) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Context(backend={self.backend!r}, array_class={self.array_class!r}, "
                f"device_id={self.device_id!r})")

    __str__ = __repr__


STATE.default_context = Context(["cpu:float"], "", "0")     # nnabla's default context
_stack = STATE.context_stack


def get_current_context():
    """The context new functions are created in: the innermost scope's, else the default."""
    return _stack[-1] if _stack else STATE.default_context


def set_default_context(ctx):
    """Set the context used outside any ``context_scope``.

    Raises:
        TypeError: ``ctx`` is not a Context.
        RuntimeError: called inside a ``context_scope``, where it would not be seen (as
            nnabla, which refuses it there).
    """
    if not isinstance(ctx, Context):
        raise TypeError(f"nn.set_default_context: argument 'ctx' is of type "
                        f"{type(ctx).__name__}; expected nnabla.Context")
    if STATE.context_stack:
        raise RuntimeError("nn.set_default_context: called inside a context_scope (the scope's "
                           "context would hide it); call it outside any context_scope")
    STATE.default_context = ctx


@contextlib.contextmanager
def context_scope(ctx):
    """Run the ``with`` block in ``ctx``.

    Example:
        >>> import nnabla as nn
        >>> with nn.context_scope(nn.Context(['cpu:float'])):
        ...     print(nn.get_current_context().backend)
        ['cpu:float']
    """
    if not isinstance(ctx, Context):
        raise TypeError(f"nn.context_scope: argument 'ctx' is of type "
                        f"{type(ctx).__name__}; expected nnabla.Context")
    _stack.append(ctx)
    try:
        yield ctx
    finally:
        _stack.pop()
