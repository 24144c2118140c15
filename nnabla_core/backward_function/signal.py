"""Backward functions of the Fourier transforms (FFT, IFFT, STFT, ISTFT).

Each transform is linear, and the adjoint of each is another transform of the family:

- the unnormalised DFT's adjoint is ``N * IDFT`` (``N`` the number of signal samples),
  and the inverse's adjoint is ``DFT / N``; the normalised pair are each other's adjoints;
- STFT's adjoint is ISTFT with ``as_stft_backward`` (plain overlap-add, no window-sum
  division), and ISTFT's adjoint is STFT with ``as_istft_backward``; the flag is toggled
  so that the adjoint of an adjoint is the original map again.

So the gradients are themselves transforms, differentiable to any order. ISTFT (and so
STFT's adjoint through it) needs a stride dividing ``fft_size``, as in nnabla; for other
strides STFT's gradient is built as a deconvolution with the windowed DFT basis instead.
"""
from __future__ import annotations

import math

import numpy as np

from ._util import F
from .array import pad_backward


def _signal_size(shape, signal_ndim):
    """The number of samples of one signal: the product of the axes before (re, im)."""
    return math.prod(shape[-signal_ndim - 1:-1])


def fft_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, signal_ndim,
                 normalized=False):
    """dx = IFFT(dy) * N (unnormalised) or IFFT(dy) (normalised: both are unitary)."""
    dx = F().ifft(grad_outputs[0], signal_ndim, normalized)
    if not normalized:
        dx = dx * _signal_size(input_shapes[0], signal_ndim)
    return [dx]


def ifft_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, signal_ndim,
                  normalized=False):
    """dx = FFT(dy) / N (unnormalised) or FFT(dy) (normalised)."""
    dx = F().fft(grad_outputs[0], signal_ndim, normalized)
    if not normalized:
        dx = dx / _signal_size(input_shapes[0], signal_ndim)
    return [dx]


def _dft_basis(window_type, window_size, fft_size):
    """(2K, 1, fft_size) filters whose stride-``stride`` convolution is the STFT: the
    windowed cosines (real parts) then the negated windowed sines (imaginary parts)."""
    from .._spec.signal import window_function
    window = window_function(window_type, window_size, fft_size)
    n = np.arange(fft_size)
    phase = 2 * np.pi * np.outer(np.arange(fft_size // 2 + 1), n) / fft_size
    basis = np.concatenate([np.cos(phase), -np.sin(phase)]) * window
    return basis[:, None, :].astype(np.float32)


def _stft_adjoint_by_deconvolution(dy_r, dy_i, input_shape, window_size, stride, fft_size,
                                   window_type, center, pad_mode):
    """STFT's adjoint for any stride: overlap-add of the basis, then the padding's adjoint."""
    import nnabla as nn
    basis = nn.Variable.from_numpy_array(_dft_basis(window_type, window_size, fft_size))
    frames = F().deconvolution(F().concatenate(dy_r, dy_i, axis=1), basis, stride=[stride])
    pad = fft_size // 2 if center else 0
    padded_length = input_shape[1] + 2 * pad
    frames = F().reshape(frames, (frames.shape[0], frames.shape[2]))
    tail = padded_length - frames.shape[1]       # samples after the last frame get nothing
    if tail:
        frames = F().pad(frames, (0, tail))
    if not pad:
        return frames
    mode = pad_mode if pad_mode == "reflect" else "constant"
    return pad_backward([frames], [None], [tuple(input_shape)], None, None, [pad, pad],
                        mode=mode)[0]


def stft_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, window_size,
                  stride, fft_size, window_type="hanning", center=True, pad_mode="reflect",
                  as_istft_backward=False):
    """dx = ISTFT(dy_r, dy_i) as STFT's adjoint (or, for ISTFT's adjoint, a true ISTFT)."""
    dy_r, dy_i = grad_outputs
    if fft_size % stride:
        return [_stft_adjoint_by_deconvolution(dy_r, dy_i, input_shapes[0], window_size,
                                               stride, fft_size, window_type, center,
                                               pad_mode)]
    dx = F().istft(dy_r, dy_i, window_size, stride, fft_size, window_type, center, pad_mode,
                   as_stft_backward=not as_istft_backward)
    return [dx]


def istft_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, window_size,
                   stride, fft_size, window_type="hanning", center=True, pad_mode="reflect",
                   as_stft_backward=False):
    """(dy_r, dy_i) = STFT(dx) as ISTFT's adjoint (or, for STFT's adjoint, a true STFT)."""
    dy_r, dy_i = F().stft(grad_outputs[0], window_size, stride, fft_size, window_type, center,
                          pad_mode, as_istft_backward=not as_stft_backward)
    return [dy_r, dy_i]


BACKWARDS = {"FFT": fft_backward, "IFFT": ifft_backward, "STFT": stft_backward,
             "ISTFT": istft_backward}
