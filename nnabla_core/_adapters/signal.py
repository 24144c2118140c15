"""``F.*`` signal functions whose Python signature differs from the function type's.

``interpolate`` takes ``scale`` or ``output_size``; ``stft``/``istft`` accept
``window_type=None`` (rectangular); ``onnx_resize`` takes ``None`` for its numeric
arguments (meaning the function type's defaults), as nnabla's signature shows.
"""
from __future__ import annotations

import math

from nnabla._dispatch import call_function

__all__ = ["interpolate", "istft", "onnx_resize", "stft"]


def interpolate(x, scale=None, output_size=None, mode='linear', align_corners=False,
                half_pixel=False, half_pixel_for_nn=False, channel_last=False):
    """Resize the last ``len(output_size)`` axes (1-D to 3-D) by interpolation.

    Args:
        x (~nnabla.Variable): input; with ``channel_last`` the spatial axes precede the
            last (channel) axis.
        scale (tuple of float): scale factors; the output size is ``floor(scale * size)``.
            Used when ``output_size`` is None.
        output_size (tuple of int): output sizes of the spatial axes.
        mode (str): ``'linear'`` or ``'nearest'``.
        align_corners (bool): map corner pixels onto corner pixels.
        half_pixel (bool): sample at pixel centres (``(d + 0.5) * scale - 0.5``).
        half_pixel_for_nn (bool): nearest mode of nnabla before 1.8 (``(d + 0.5) * scale``).
        channel_last (bool): the last axis is the channel axis.

    Returns:
        ~nnabla.Variable: the resized array.

    Raises:
        ValueError: neither ``scale`` nor ``output_size`` given, or a bad ``mode``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.array([[0., 2.]], dtype=np.float32))
    >>> F.interpolate(a, output_size=(3,), align_corners=True).data.tolist()
    [[0.0, 1.0, 2.0]]
    """
    if scale is None and output_size is None:
        raise ValueError("F.interpolate: argument 'scale' is None and 'output_size' is None; "
                         "expected one of them")
    if output_size is None:
        n = len(scale)
        sizes = x.shape[-n - 1:-1] if channel_last else x.shape[-n:]
        output_size = [math.floor(s * d) for s, d in zip(scale, sizes)]
    return call_function("Interpolate", x, output_size=output_size, mode=mode,
                         align_corners=align_corners, half_pixel=half_pixel,
                         half_pixel_for_nn=half_pixel_for_nn, channel_last=channel_last)


def stft(x, window_size, stride, fft_size, window_type='hanning', center=True,
         pad_mode='reflect', as_istft_backward=False):
    """Short-time Fourier transform of a (batch, samples) signal.

    Args:
        x (~nnabla.Variable): signal of shape (batch_size, sample_size).
        window_size (int): analysis window length (zero-padded to ``fft_size``).
        stride (int): hop between frames.
        fft_size (int): FFT length; there are ``fft_size // 2 + 1`` frequency bins.
        window_type (str or None): ``'hanning'``, ``'hamming'`` or ``'rectangular'``
            (None means rectangular).
        center (bool): pad ``fft_size // 2`` samples at both ends first.
        pad_mode (str): ``'reflect'`` or ``'constant'`` (zeros).
        as_istft_backward (bool): compute the adjoint of ISTFT instead (used by nn.grad).

    Returns:
        tuple of ~nnabla.Variable: real and imaginary parts, each of shape
        (batch_size, fft_size // 2 + 1, frames).

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.ones((1, 16), dtype=np.float32))
    >>> [y.shape for y in F.stft(a, 8, 4, 8)]
    [(1, 5, 5), (1, 5, 5)]
    """
    if window_type is None:
        window_type = "rectangular"
    return call_function("STFT", x, window_size=window_size, stride=stride, fft_size=fft_size,
                         window_type=window_type, center=center, pad_mode=pad_mode,
                         as_istft_backward=as_istft_backward)


def istft(y_r, y_i, window_size, stride, fft_size, window_type='hanning', center=True,
          pad_mode='reflect', as_stft_backward=False):
    """Inverse short-time Fourier transform (windowed overlap-add).

    Arguments are those of :func:`stft`; ``pad_mode`` must be ``'constant'`` unless
    ``as_stft_backward`` (nnabla's rule: ISTFT only slices the padding away).

    Returns:
        ~nnabla.Variable: the signal, shape (batch_size, sample_size).

    Raises:
        ValueError: the squared window does not overlap-add to nonzero values (NOLA);
            the error is also a ``RuntimeError``, as nnabla raises.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> x = np.random.RandomState(0).randn(1, 32).astype(np.float32)
    >>> yr, yi = F.stft(nn.NdArray.from_numpy_array(x), 8, 4, 8)
    >>> z = F.istft(yr, yi, 8, 4, 8, pad_mode='constant')
    >>> bool(np.allclose(z.data, x, atol=1e-5))
    True
    """
    if window_type is None:
        window_type = "rectangular"
    return call_function("ISTFT", y_r, y_i, window_size=window_size, stride=stride,
                         fft_size=fft_size, window_type=window_type, center=center,
                         pad_mode=pad_mode, as_stft_backward=as_stft_backward)


def onnx_resize(x, roi=(), scales=(), sizes=(), mode='nearest',
                coordinate_transformation_mode='half_pixel', cubic_coeff_a=None,
                exclude_outside=None, extrapolation_value=None,
                nearest_mode='round_prefer_floor', n_outputs=-1, outputs=None):
    """Resize as ONNX Resize (opset 11); forward only.

    Args:
        x (~nnabla.Variable): input.
        roi (tuple of float): starts then ends per axis, for ``tf_crop_and_resize``.
        scales (tuple of float): per-axis scales (output size ``floor(size * scale)``).
        sizes (tuple of int): per-axis output sizes (instead of ``scales``).
        mode (str): ``'nearest'``, ``'linear'`` or ``'cubic'``.
        coordinate_transformation_mode (str): ONNX's coordinate mode.
        cubic_coeff_a (float): cubic coefficient (None: -0.75).
        exclude_outside (int): 1 drops (and renormalises) cubic taps outside the input
            (None: 0).
        extrapolation_value (float): value outside the roi in ``tf_crop_and_resize``
            (None: 0.0).
        nearest_mode (str): rounding of the nearest mode.

    Returns:
        ~nnabla.Variable: the resized array.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> a = nn.NdArray.from_numpy_array(np.array([[1., 2.]], dtype=np.float32))
    >>> F.onnx_resize(a, scales=(1.0, 2.0)).data.tolist()
    [[1.0, 1.0, 2.0, 2.0]]
    """
    return call_function(
        "ONNXResize", x, roi=roi, scales=scales, sizes=sizes, mode=mode,
        coordinate_transformation_mode=coordinate_transformation_mode,
        cubic_coeff_a=-0.75 if cubic_coeff_a is None else cubic_coeff_a,
        exclude_outside=0 if exclude_outside is None else exclude_outside,
        extrapolation_value=0.0 if extrapolation_value is None else extrapolation_value,
        nearest_mode=nearest_mode, n_outputs=n_outputs, outputs=outputs)
