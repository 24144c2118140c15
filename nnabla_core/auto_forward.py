"""Dynamic (auto-forward) mode: functions run as soon as they are created."""
from __future__ import annotations

import contextlib

from ._state import STATE


def get_auto_forward():
    """Whether functions currently run as soon as they are created."""
    return STATE.auto_forward


def set_auto_forward(auto):
    """Turn auto-forward (dynamic graph) mode on or off globally."""
    STATE.auto_forward = bool(auto)


@contextlib.contextmanager
def auto_forward(auto=True):
    """Run the ``with`` block in auto-forward mode (``auto=False`` turns it off).

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.ones((2,)))
        >>> with nn.auto_forward():
        ...     y = F.add_scalar(x, 1)
        >>> y.d
        array([2., 2.], dtype=float32)
    """
    previous = STATE.auto_forward
    STATE.auto_forward = bool(auto)
    try:
        yield
    finally:
        STATE.auto_forward = previous
