"""Bad arguments of the signal and geometry families raise from shape inference."""
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _infer(name, shapes, **kw):
    spec = SPECS[name]
    return infer(spec, shapes, bind_args(spec, kw))


def test_interpolate_rejects_an_unknown_mode_naming_the_argument():
    with pytest.raises(ValueError, match="'mode'.*cubic"):
        _infer("Interpolate", [(1, 1, 4, 4)], output_size=(8, 8), mode="cubic")


def test_interpolate_rejects_four_spatial_sizes():
    with pytest.raises(ValueError, match="output_size"):
        _infer("Interpolate", [(1, 2, 3, 3, 3, 3)], output_size=(4, 4, 4, 4), mode="linear")


def test_interpolate_needs_a_channel_axis_with_channel_last():
    with pytest.raises(ValueError, match="'x'"):
        _infer("Interpolate", [(4, 4)], output_size=(8, 8), mode="linear", channel_last=True)


def test_onnx_resize_rejects_an_unknown_coordinate_mode_and_missing_sizes():
    with pytest.raises(ValueError, match="coordinate_transformation_mode"):
        _infer("ONNXResize", [(1, 4)], scales=(1, 2), coordinate_transformation_mode="bogus")
    with pytest.raises(ValueError, match="scales"):
        _infer("ONNXResize", [(1, 4)])
    with pytest.raises(ValueError, match="sizes"):
        _infer("ONNXResize", [(1, 4)], sizes=(2,))


def test_fft_needs_a_trailing_complex_axis_and_a_valid_signal_ndim():
    with pytest.raises(ValueError, match="'x'"):
        _infer("FFT", [(4, 8)], signal_ndim=1)
    with pytest.raises(ValueError, match="signal_ndim"):
        _infer("IFFT", [(2, 2, 2, 2, 2)], signal_ndim=4)


def test_istft_refuses_reflect_padding_and_windows_violating_nola():
    shape = (1, 9, 5)
    with pytest.raises(ValueError, match="pad_mode"):
        _infer("ISTFT", [shape, shape], window_size=16, stride=4, fft_size=16)
    with pytest.raises(RuntimeError, match=r"NOLA\(Nonzero Overlap Add\) condition is not met"):
        _infer("ISTFT", [shape, shape], window_size=16, stride=4, fft_size=16, center=False,
               pad_mode="constant")


def test_stft_checks_its_input_and_window_arguments():
    with pytest.raises(ValueError, match="'x'"):
        _infer("STFT", [(2, 3, 64)], window_size=16, stride=4, fft_size=16)
    with pytest.raises(ValueError, match="fft_size"):
        _infer("STFT", [(2, 64)], window_size=16, stride=4, fft_size=8)
    with pytest.raises(ValueError, match="window_type"):
        _infer("STFT", [(2, 64)], window_size=16, stride=4, fft_size=16, window_type="kaiser")


def test_geometry_functions_check_shapes_and_modes():
    with pytest.raises(ValueError, match="'theta'"):
        _infer("AffineGrid", [(2, 2, 3)], size=(2, 3, 4))
    with pytest.raises(ValueError, match="'grid'"):
        _infer("WarpByGrid", [(1, 2, 4, 4), (1, 3, 3, 3)])
    with pytest.raises(ValueError, match="padding_mode"):
        _infer("WarpByGrid", [(1, 2, 4, 4), (1, 3, 3, 2)], padding_mode="wrap")
    with pytest.raises(ValueError, match="'flow'"):
        _infer("WarpByFlow", [(1, 2, 4, 4), (1, 3, 4, 4)])
    with pytest.raises(ValueError, match="'shape'"):
        _infer("ImageAugmentation", [(2, 3, 8, 8)], shape=(4, 5, 8))
