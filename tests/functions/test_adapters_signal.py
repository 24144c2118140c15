"""F.interpolate, F.stft, F.istft and F.onnx_resize: nnabla's Python-level signatures."""
import nnabla as nn
import nnabla.functions as F
import numpy as np
import pytest


def _nd(a):
    return nn.NdArray.from_numpy_array(np.asarray(a, dtype=np.float32))


def test_interpolate_computes_output_size_from_scale_by_floor():
    x = _nd(np.zeros((2, 3, 5, 4)))
    assert F.interpolate(x, scale=(1.3, 0.5)).shape == (2, 3, 6, 2)
    xc = _nd(np.zeros((2, 5, 4, 3)))
    assert F.interpolate(xc, scale=(1.3, 0.5), channel_last=True).shape == (2, 6, 2, 3)


def test_interpolate_needs_scale_or_output_size_and_a_known_mode():
    with pytest.raises(ValueError, match="scale"):
        F.interpolate(_nd(np.zeros((1, 4))))
    with pytest.raises(ValueError, match="'mode'"):
        F.interpolate(_nd(np.zeros((1, 4))), output_size=(8,), mode="cubic")


def test_stft_then_istft_reconstructs_the_signal():
    x = np.random.RandomState(0).randn(2, 256).astype(np.float32)
    for window in ("hanning", "hamming", None):
        yr, yi = F.stft(_nd(x), 64, 16, 64, window_type=window)
        z = F.istft(yr, yi, 64, 16, 64, window_type=window, pad_mode="constant")
        np.testing.assert_allclose(z.data, x, atol=1e-4)


def test_stft_matches_numpy_rfft_of_windowed_frames():
    x = np.random.RandomState(1).randn(1, 40).astype(np.float32)
    yr, yi = F.stft(_nd(x), 8, 4, 8, window_type="rectangular", center=False)
    frames = np.stack([x[0, t * 4:t * 4 + 8] for t in range(9)])
    ref = np.fft.rfft(frames, axis=1).T
    np.testing.assert_allclose(yr.data[0], ref.real, atol=1e-4)
    np.testing.assert_allclose(yi.data[0], ref.imag, atol=1e-4)


def test_onnx_resize_takes_none_for_numeric_defaults():
    y = F.onnx_resize(_nd([[1.0, 2.0]]), scales=(1.0, 2.0), mode="cubic", cubic_coeff_a=None,
                      exclude_outside=None, extrapolation_value=None)
    assert y.shape == (1, 4)


def test_fft_and_ifft_are_inverse_through_the_graph():
    x = np.random.RandomState(2).randn(3, 4, 5, 2).astype(np.float32)
    v = nn.Variable.from_numpy_array(x)
    z = F.ifft(F.fft(v, 2, normalized=True), 2, normalized=True)
    z.forward()
    np.testing.assert_allclose(z.d, x, atol=1e-5)
