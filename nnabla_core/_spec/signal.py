"""Signal processing: resizing (interpolate, onnx_resize), FFT/IFFT, STFT/ISTFT.

Complex arrays are real arrays whose trailing axis of size 2 holds (real, imaginary).
STFT outputs, and ISTFT inputs, are (batch, fft_size // 2 + 1, frames) pairs of real
and imaginary parts.
"""
from __future__ import annotations

import numpy as np

from .args import check_positive
from .base import Arg, FunctionSpec, Input, Needs, Output

CATEGORY = "Signal Processing"
Y = (Output("y"),)
WINDOWS = ("hanning", "hamming", "rectangular")
PAD_MODES = ("constant", "reflect")
COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


class NolaError(ValueError, RuntimeError):
    """ISTFT cannot invert: the overlap-added squared window has a zero.

    A ``ValueError`` like every bad argument here, and a ``RuntimeError`` as nnabla raises.
    """


def interpolate(spec, x, *, output_size, mode, align_corners, half_pixel, half_pixel_for_nn,
                channel_last):
    n = len(output_size)
    if not 1 <= n <= 3:
        raise spec.value_error("output_size", "1, 2 or 3 sizes (1-D to 3-D interpolation)",
                               output_size)
    check_positive(spec, "output_size", output_size)
    need = n + 1 if channel_last else n
    if len(x) < need:
        raise spec.shape_error("x", f"at least {need} dimensions", x,
                               why=f"output_size has {n} spatial sizes"
                               + (" and channel_last adds a channel axis" if channel_last
                                  else ""))
    if channel_last:
        return (tuple(x[:-n - 1]) + tuple(output_size) + (x[-1],),)
    return (tuple(x[:-n]) + tuple(output_size),)


def onnx_output_shape(spec, x, roi, scales, sizes):
    """Output shape of ONNXResize: from ``sizes``, else ``floor(x.shape * scales)``."""
    ndim = len(x)
    if (len(scales) > 0) == (len(sizes) > 0):
        raise spec.value_error("scales", "exactly one of scales and sizes to be given",
                               f"scales={scales}, sizes={sizes}")
    if sizes:
        if len(sizes) != ndim:
            raise spec.value_error("sizes", f"{ndim} sizes (one per axis of x)", sizes)
        check_positive(spec, "sizes", sizes)
        out = tuple(sizes)
    else:
        if len(scales) != ndim:
            raise spec.value_error("scales", f"{ndim} scales (one per axis of x)", scales)
        check_positive(spec, "scales", scales)
        out = tuple(int(np.floor(d * s)) for d, s in zip(x, scales))
    if roi and len(roi) != 2 * ndim:
        raise spec.value_error("roi", f"{2 * ndim} values (starts then ends per axis)", roi)
    return out


def onnx_resize(spec, x, *, roi, scales, sizes, mode, coordinate_transformation_mode,
                cubic_coeff_a, exclude_outside, extrapolation_value, nearest_mode):
    out = onnx_output_shape(spec, x, roi, scales, sizes)
    if coordinate_transformation_mode == "tf_crop_and_resize" and not roi:
        raise spec.value_error("roi", "2 * x.ndim values for tf_crop_and_resize", roi)
    if any(o <= 0 for o in out):
        raise spec.value_error("scales", "scales giving non-empty output sizes", scales,
                               why=f"output shape would be {out}")
    return (out,)


def fft(spec, x, *, signal_ndim, normalized):
    if signal_ndim not in (1, 2, 3):
        raise spec.value_error("signal_ndim", "1, 2 or 3", signal_ndim)
    if len(x) < signal_ndim + 1 or x[-1] != 2:
        raise spec.shape_error("x", f"(..., N_1, ..., N_{signal_ndim}, 2)", x,
                               why="complex values are a trailing axis of (real, imaginary)")
    return (tuple(x),)


def window_function(window_type, window_size, fft_size):
    """The periodic analysis window, zero-padded at both ends to ``fft_size`` (float64)."""
    n = np.arange(window_size)
    if window_type == "rectangular":
        w = np.ones(window_size)
    else:
        a = 0.5 if window_type == "hanning" else 0.54
        w = a - (1 - a) * np.cos(2 * np.pi * n / window_size)
    left = (fft_size - window_size) // 2
    return np.pad(w, (left, fft_size - window_size - left))


def inverse_window_sum(window_type, window_size, stride, fft_size, frames):
    """Overlap-add of the squared window over ``frames`` frames (ISTFT's normaliser)."""
    w2 = window_function(window_type, window_size, fft_size) ** 2
    length = (frames - 1) * stride + fft_size
    total = np.zeros(length)
    for start in range(0, fft_size, stride):       # one pass per offset, not per frame
        chunk = w2[start:start + stride]
        pos = start + np.arange(frames)[:, None] * stride + np.arange(len(chunk))
        np.add.at(total, pos.ravel(), np.tile(chunk, frames))
    return total


def _check_stft_args(spec, window_size, stride, fft_size):
    check_positive(spec, "stride", (stride,))
    check_positive(spec, "window_size", (window_size,))
    if fft_size < window_size:
        raise spec.value_error("fft_size", f"at least window_size ({window_size})", fft_size)


def _check_istft_args(spec, window_size, stride, fft_size, window_type, pad_mode, frames,
                      pad):
    """What a normal (not as_stft_backward) ISTFT requires, also of STFT as its adjoint."""
    if fft_size % stride:
        raise spec.value_error("stride", f"a divisor of fft_size ({fft_size})", stride)
    if pad_mode != "constant":
        raise spec.value_error("pad_mode", "'constant' for ISTFT (or STFT as its backward)",
                               pad_mode, why="ISTFT only slices the padding away")
    inv = inverse_window_sum(window_type, window_size, stride, fft_size, frames)
    inv = inv[pad:inv.size - pad]
    if inv.size and inv.min() < 1e-11:
        raise NolaError(f"{spec.api_name}: NOLA(Nonzero Overlap Add) condition is not met: "
                        f"the squared {window_type} window overlap-added with stride "
                        f"{stride} is zero at sample {int(inv.argmin())}")


def stft(spec, x, *, window_size, stride, fft_size, window_type, center, pad_mode,
         as_istft_backward):
    _check_stft_args(spec, window_size, stride, fft_size)
    if len(x) != 2:
        raise spec.shape_error("x", "(batch_size, sample_size)", x)
    pad = fft_size // 2 if center else 0
    if as_istft_backward:
        _check_istft_args(spec, window_size, stride, fft_size, window_type, pad_mode,
                          (x[1] + 2 * pad - fft_size) // stride + 1, pad)
        length = x[1] + 2 * pad
        if (length - fft_size) % stride:
            raise spec.shape_error("x", "a length an ISTFT can produce", x,
                                   why="(sample_size + padding - fft_size) % stride != 0")
    elif center and pad_mode == "reflect" and pad >= x[1]:
        raise spec.shape_error("x", f"more than fft_size // 2 = {pad} samples", x,
                               why="reflection padding needs them")
    length = x[1] + 2 * pad
    if length < fft_size:
        raise spec.shape_error("x", f"at least {fft_size - 2 * pad} samples", x,
                               why="a frame must fit")
    shape = (x[0], fft_size // 2 + 1, (length - fft_size) // stride + 1)
    return shape, shape


def istft(spec, y_r, y_i, *, window_size, stride, fft_size, window_type, center, pad_mode,
          as_stft_backward):
    _check_stft_args(spec, window_size, stride, fft_size)
    if len(y_r) != 3 or y_r[1] != fft_size // 2 + 1:
        raise spec.shape_error("y_r", f"(batch_size, {fft_size // 2 + 1}, frames)", y_r)
    if tuple(y_i) != tuple(y_r):
        raise spec.shape_error("y_i", f"the shape of y_r {tuple(y_r)}", y_i)
    pad = fft_size // 2 if center else 0
    length = (y_r[2] - 1) * stride + fft_size
    if fft_size % stride:
        raise spec.value_error("stride", f"a divisor of fft_size ({fft_size})", stride)
    if not as_stft_backward:
        _check_istft_args(spec, window_size, stride, fft_size, window_type, pad_mode, y_r[2],
                          pad)
    elif center and pad_mode == "reflect" and pad >= length - 2 * pad:
        raise spec.shape_error("y_r", "more frames", y_r, why="reflection padding needs them")
    return ((y_r[0], length - 2 * pad),)


STFT_ARGS = (Arg("window_size", "int"), Arg("stride", "int"), Arg("fft_size", "int"),
             Arg("window_type", "str", "hanning", choices=WINDOWS),
             Arg("center", "bool", True),
             Arg("pad_mode", "str", "reflect", choices=PAD_MODES))

SPECS = [
    FunctionSpec(
        "Interpolate", "interpolate", CATEGORY, (Input("x"),),
        (Arg("output_size", "ints"), Arg("mode", "str", choices=("nearest", "linear")),
         Arg("align_corners", "bool", True), Arg("half_pixel", "bool", False),
         Arg("half_pixel_for_nn", "bool", False), Arg("channel_last", "bool", False)),
        Y, interpolate, Needs(),
        doc="Resizes the last len(output_size) axes (before the channel axis if "
            "channel_last) by linear or nearest-neighbour interpolation."),
    FunctionSpec(
        "ONNXResize", "onnx_resize", CATEGORY, (Input("x"),),
        (Arg("roi", "floats", ()), Arg("scales", "floats", ()), Arg("sizes", "ints", ()),
         Arg("mode", "str", "nearest", choices=("nearest", "linear", "cubic")),
         Arg("coordinate_transformation_mode", "str", "half_pixel",
             choices=COORDINATE_MODES),
         Arg("cubic_coeff_a", "float", -0.75), Arg("exclude_outside", "int", 0),
         Arg("extrapolation_value", "float", 0.0),
         Arg("nearest_mode", "str", "round_prefer_floor", choices=NEAREST_MODES)),
        Y, onnx_resize, Needs(), differentiable=False,
        doc="Resizes every axis as ONNX Resize (opset 11) does, as ONNX Runtime computes "
            "it; forward only, as in nnabla."),
    FunctionSpec(
        "FFT", "fft", CATEGORY, (Input("x"),),
        (Arg("signal_ndim", "int"), Arg("normalized", "bool", False)), Y, fft, Needs(),
        doc="Complex-to-complex DFT over the signal_ndim axes before the trailing "
            "(real, imaginary) axis; normalized multiplies by 1/sqrt(prod N)."),
    FunctionSpec(
        "IFFT", "ifft", CATEGORY, (Input("x"),),
        (Arg("signal_ndim", "int"), Arg("normalized", "bool", False)), Y, fft, Needs(),
        doc="Inverse DFT (scaled by 1/prod N, or 1/sqrt(prod N) if normalized)."),
    FunctionSpec(
        "STFT", "stft", CATEGORY, (Input("x"),),
        STFT_ARGS + (Arg("as_istft_backward", "bool", False),),
        (Output("y_r"), Output("y_i")), stft, Needs(),
        doc="Short-time Fourier transform of (batch, samples) signals: real and imaginary "
            "parts of shape (batch, fft_size // 2 + 1, frames)."),
    FunctionSpec(
        "ISTFT", "istft", CATEGORY, (Input("y_r"), Input("y_i")),
        STFT_ARGS + (Arg("as_stft_backward", "bool", False),),
        (Output("x"),), istft, Needs(),
        doc="Inverse STFT by windowed overlap-add, divided by the overlap-added squared "
            "window; with center, the fft_size // 2 padding is removed."),
]
