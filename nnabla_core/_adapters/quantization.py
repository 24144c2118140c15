"""``F.*`` quantizers whose Python signature differs from the function type's.

nnabla's wrappers take a ``quantize`` flag (False returns ``x`` itself, no function is
added) and ``quantize_linear`` takes a numpy dtype where the function type has a code.
"""
from __future__ import annotations

import numpy as np
from nnabla._dispatch import call_function

__all__ = ["fixed_point_quantize", "min_max_quantize", "pow2_quantize", "quantize_linear"]

# nnabla's dtype codes of the integer types quantize_linear supports.
_DTYPE_CODES = {np.dtype(np.int8): 1, np.dtype(np.uint8): 2}


def fixed_point_quantize(x, sign=True, n=8, delta=2**-4, quantize=True, ste_fine_grained=True,
                         outputs=None):
    """Fixed-point quantization: multiples of ``delta`` saturated to ``n`` bits.

    Args:
        x (~nnabla.Variable): input.
        sign (bool): signed (one bit for the sign) or unsigned range.
        n (int): bit width.
        delta (float): step size.
        quantize (bool): False returns ``x`` unchanged.
        ste_fine_grained (bool): the straight-through gradient is zero outside the range.

    Returns:
        ~nnabla.Variable: the quantized values.
    """
    if not quantize:
        return x
    return call_function("FixedPointQuantize", x, sign=sign, n=n, delta=delta,
                         ste_fine_grained=ste_fine_grained, outputs=outputs)


def pow2_quantize(x, sign=True, with_zero=True, n=8, m=1, quantize=True, ste_fine_grained=True,
                  outputs=None):
    """Power-of-two quantization of ``x`` with upper bound ``2**m`` and ``n`` bits.

    Args:
        x (~nnabla.Variable): input.
        sign (bool): keep the sign (one bit).
        with_zero (bool): allow zero (one bit); small values prune to zero.
        n (int): bit width.
        m (int): ``2**m`` bounds |y|.
        quantize (bool): False returns ``x`` unchanged.
        ste_fine_grained (bool): the straight-through gradient is zero above the range.

    Returns:
        ~nnabla.Variable: the quantized values.
    """
    if not quantize:
        return x
    return call_function("Pow2Quantize", x, sign=sign, with_zero=with_zero, n=n, m=m,
                         ste_fine_grained=ste_fine_grained, outputs=outputs)


def min_max_quantize(x, qr_min, qr_max, ql_min, ql_max, decay=0.999, x_min_max=False, ema=False,
                     ste_fine_grained=True, eps=0.01, quantize=True, outputs=None):
    """Min-max quantization of ``x`` to the levels ``[ql_min, ql_max]``.

    ``qr_min``/``qr_max`` (the real range) are updated in place during forward when
    ``x_min_max`` or ``ema`` is set, and nudged to be at least ``eps`` apart.

    Returns:
        ~nnabla.Variable: the quantized values (``x`` itself when ``quantize`` is False).
    """
    if not quantize:
        return x
    return call_function("MinMaxQuantize", x, qr_min, qr_max, ql_min, ql_max, decay=decay,
                         x_min_max=x_min_max, ema=ema, ste_fine_grained=ste_fine_grained,
                         eps=eps, outputs=outputs)


def quantize_linear(x, scale, zero_point, round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False,
                    dtype=np.int8):
    """y = saturate(round(x / scale) + zero_point) in the range of ``dtype``.

    Args:
        x, scale, zero_point (~nnabla.Variable): input, scale and zero point (broadcast).
        round_mode (str): ``'HALF_AWAY_FROM_ZERO'`` or ``'HALF_TO_EVEN'``.
        narrow_range (bool): drop the lowest level (int8: [-127, 127]).
        dtype: ``np.int8`` or ``np.uint8``.

    Returns:
        ~nnabla.Variable: the quantized values (stored as floats, as nnabla).
    """
    try:
        code = _DTYPE_CODES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise ValueError(f"F.quantize_linear: argument 'dtype' is {dtype!r}; expected "
                         "np.int8 or np.uint8") from None
    return call_function("QuantizeLinear", x, scale, zero_point, round_mode=round_mode,
                         narrow_range=narrow_range, dtype=code)
