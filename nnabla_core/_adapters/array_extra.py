"""``F.*`` wrappers of the extra array functions whose signature differs from the type's."""
from __future__ import annotations

from nnabla._dispatch import call_function

__all__ = ["pad_packed_sequence"]


def pad_packed_sequence(packed_sequence, batch_sizes, batch_first=False, padding_value=None,
                        total_length=None, n_outputs=-1, outputs=None):
    """Unpack a packed sequence into a padded one: the inverse of ``pack_padded_sequence``.

    Args:
        packed_sequence (~nnabla.Variable): (N, *) rows, time step after time step.
        batch_sizes (~nnabla.Variable): (T,) batch size of each time step (decreasing).
        batch_first (bool): output (B, T, *) instead of (T, B, *).
        padding_value (float or None): value of the padding; None means 0.
        total_length (int or None): pad the time axis up to this length (a shorter one
            is ignored, as in nnabla); None means no extra padding.

    Returns:
        tuple: the padded sequence and the (B,) lengths (int32).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> p = nn.NdArray.from_numpy_array(np.array([1., 2., 3.], np.float32))
    >>> b = nn.NdArray.from_numpy_array(np.array([2, 1]))
    >>> y, lengths = F.pad_packed_sequence(p, b)
    >>> y.data.tolist(), lengths.data.tolist()
    ([[1.0, 2.0], [3.0, 0.0]], [2, 1])
    """
    return call_function("PadPackedSequence", packed_sequence, batch_sizes,
                         batch_first=batch_first,
                         padding_value=0.0 if padding_value is None else padding_value,
                         total_length=-1 if total_length is None else total_length,
                         n_outputs=n_outputs, outputs=outputs)
