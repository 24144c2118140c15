"""The function spec, as backends may read it: every function's interface and the
device-free helpers its kernels share with the core.

``SPECS`` maps nnabla's function type name (``'Affine'``) to its spec entry (the same
object a kernel receives as ``self.spec``); ``BY_SNAKE`` maps the ``F.`` name. A kernel
that composes other functions binds and infers them with :func:`bind_args` and
:func:`infer`, exactly as the core does for a call.
"""
from __future__ import annotations

from ._spec import BY_SNAKE, SPECS
from ._spec.array_extra import parse_einsum
from ._spec.binding import bind_args, infer
from ._spec.signal import inverse_window_sum, window_function

__all__ = ["SPECS", "BY_SNAKE", "bind_args", "infer", "parse_einsum", "window_function",
           "inverse_window_sum"]
