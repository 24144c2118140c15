"""``nnabla.testing.clear_called_flag_recorder``: nnabla's recorder of buffer clearing.

In nnabla, while the recorder is active, every function run in a forward pass
records, per input and output, whether that array's ``clear()`` was called (the
evidence tests use to check ``clear_no_need_grad`` / ``clear_buffer``). Our graph
engine does not record this yet, so activating the recorder raises
``NotImplementedError`` instead of returning empty or made-up flags; the module
exists so that code importing it still loads.
"""

_MESSAGE = ("nnabla.testing.clear_called_flag_recorder: recording clear() calls per function "
            "is not implemented by this nnabla; check NdArray.clear_called on the arrays instead")


def activate_clear_called_flag_recorder():
    """Start recording (not implemented: raises ``NotImplementedError``)."""
    raise NotImplementedError(_MESSAGE)


def deactivate_clear_called_flag_recorder():
    """Stop recording; a no-op, since recording never starts."""


def get_input_clear_called_flags():
    """Flags of the inputs per recorded function (not implemented: raises)."""
    raise NotImplementedError(_MESSAGE)


def get_output_clear_called_flags():
    """Flags of the outputs per recorded function (not implemented: raises)."""
    raise NotImplementedError(_MESSAGE)
