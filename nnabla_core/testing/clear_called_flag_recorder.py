"""``nnabla.testing.clear_called_flag_recorder``: nnabla's recorder of buffer clearing.

While the recorder is active, every function a forward or backward pass runs (including
the re-runs of a backward's recomputation) records, once its step's buffers were cleared,
``(data.clear_called, grad.clear_called)`` of each of its inputs and outputs. Tests use
these flags to check what ``clear_no_need_grad`` / ``clear_buffer`` / ``recompute`` clear.

Example:
    >>> import nnabla as nn, nnabla.functions as F
    >>> from nnabla.testing import clear_called_flag_recorder as recorder
    >>> x = nn.Variable((2,), need_grad=True)
    >>> y = F.add_scalar(F.identity(x))
    >>> recorder.activate_clear_called_flag_recorder()
    >>> y.forward(clear_no_need_grad=True)
    >>> [[data for data, grad in flags] for flags in recorder.get_input_clear_called_flags()]
    [[False], [True]]
    >>> recorder.deactivate_clear_called_flag_recorder()
"""
from __future__ import annotations

from .._state import STATE

__all__ = ["activate_clear_called_flag_recorder", "deactivate_clear_called_flag_recorder",
           "get_input_clear_called_flags", "get_output_clear_called_flags"]


class _Recorder:
    """The flags recorded since activation, one list per function run."""

    def __init__(self):
        self.inputs = []
        self.outputs = []

    def record(self, input_flags, output_flags):
        self.inputs.append(input_flags)
        self.outputs.append(output_flags)


def activate_clear_called_flag_recorder():
    """Start recording (a no-op when already recording: the records are kept)."""
    if STATE.clear_called_recorder is None:
        STATE.clear_called_recorder = _Recorder()


def deactivate_clear_called_flag_recorder():
    """Stop recording and drop what was recorded."""
    STATE.clear_called_recorder = None


def _recorded(which):
    recorder = STATE.clear_called_recorder
    return [] if recorder is None else [list(flags) for flags in getattr(recorder, which)]


def get_input_clear_called_flags():
    """Per recorded function run, ``(data, grad)`` clear_called flags of its inputs.

    Returns:
        list of list of (bool, bool); empty when the recorder is not active.
    """
    return _recorded("inputs")


def get_output_clear_called_flags():
    """Per recorded function run, ``(data, grad)`` clear_called flags of its outputs.

    Returns:
        list of list of (bool, bool); empty when the recorder is not active.
    """
    return _recorded("outputs")
