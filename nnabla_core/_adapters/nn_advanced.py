"""``F.patch_correlation``: nnabla's wrapper around the NHWC PatchCorrelation type.

It expands scalar arguments, moves channel-first inputs to channels-last and the
result to ``(N, C_y, C_x, H_o, W_o)``.
"""
from __future__ import annotations

from nnabla._dispatch import call_function
from nnabla._spec.args import adapter_args

__all__ = ["patch_correlation"]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def patch_correlation(x1, x2, patch=(1, 1), shift=(0, 0), patch_step=(1, 1),
                      shift_step=(1, 1), padding=(0, 0, 0, 0), channel_last=False):
    """Multiplicative patch-wise comparison of ``x1`` with shifted patches of ``x2``.

    O(s_y, s_x, h, w) = sum_{c, k_h, k_w} x1(c, h + k_h, w + k_w) x2(c, h + k_h + s_y,
    w + k_w + s_x), over patch positions advanced by ``patch_step`` in the zero-padded
    input and shifts in [-shift, shift] by ``shift_step`` (FlowNetC's correlation).

    Args:
        x1, x2 (~nnabla.Variable): 4-D inputs of equal shape, NCHW (NHWC if
            ``channel_last``).
        patch, shift, patch_step, shift_step (int or tuple of 2 ints): vertical and
            horizontal values; an int is used for both.
        padding (int, 2 or 4 ints): (top, bottom, left, right); 2 values are
            (vertical, horizontal); an int pads every side.
        channel_last (bool): inputs are NHWC.

    Returns:
        ~nnabla.Variable: shape (N, C_y, C_x, H_o, W_o) with
        H_o = (H + top + bottom - patch_h) // patch_step_h + 1 and
        C_y = ceil((2 shift_y + 1) / shift_step_y).

    Raises:
        ValueError: when the inputs are not 4-D arrays of equal shape.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = nn.NdArray.from_numpy_array(np.ones((1, 2, 3, 4), np.float32))
    >>> F.patch_correlation(x, x, patch=(3, 4)).data.tolist()
    [[[[[24.0]]]]]
    """
    adapter_args("patch_correlation", patch=patch, shift=shift, patch_step=patch_step,
                 shift_step=shift_step, padding=padding)
    if not len(x1.shape) == len(x2.shape) == 4:
        raise ValueError(f"F.patch_correlation: arguments 'x1', 'x2' have shapes "
                         f"{tuple(x1.shape)}, {tuple(x2.shape)}; expected 4 dimensions")
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(f"F.patch_correlation: argument 'x2' has shape {tuple(x2.shape)}; "
                         f"expected {tuple(x1.shape)} (the shape of x1)")
    if isinstance(padding, int):
        padding = (padding,) * 4
    elif len(padding) == 2:
        padding = (padding[0], padding[0], padding[1], padding[1])
    if not channel_last:
        x1 = call_function("Transpose", x1, axes=(0, 2, 3, 1))
        x2 = call_function("Transpose", x2, axes=(0, 2, 3, 1))
    y = call_function("PatchCorrelation", x1, x2, patch=_pair(patch), shift=_pair(shift),
                      patch_step=_pair(patch_step), shift_step=_pair(shift_step),
                      padding=tuple(padding))
    if not channel_last:
        y = call_function("Transpose", y, axes=(0, 3, 4, 1, 2))
    return y
