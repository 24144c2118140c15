"""Intensity rescaling and argument checks shared by the audio backends."""
from __future__ import annotations

import os

import numpy as np


def normalize_intensity(audio_arr, input_low, input_high):
    """Map ``[input_low, input_high]`` to [0, 1].

    An empty range maps to 0 when ``input_low`` is 0 and to ``audio_arr / input_low``
    (all 1 for constant audio) otherwise.
    """
    width = input_high - input_low
    if width == 0:
        return audio_arr if input_low == 0 else audio_arr / input_low
    return (audio_arr - input_low) / width


def rescale_intensity(audio_arr, input_low=0, input_high=255, output_low=0, output_high=255,
                      output_type=None):
    """Map ``[input_low, input_high]`` linearly to ``[output_low, output_high]``.

    Args:
        audio_arr (numpy.ndarray): The samples.
        input_low, input_high (float): Input range.
        output_low, output_high (float): Output range.
        output_type (numpy.dtype or None): dtype of the result; default ``audio_arr.dtype``.

    Returns:
        numpy.ndarray: ``(a - input_low) / (input_high - input_low) * (output_high -
        output_low) + output_low``, computed in float64.

    Raises:
        ValueError: ``audio_arr`` is not a numpy array.
    """
    if not isinstance(audio_arr, np.ndarray):
        raise ValueError("rescale_intensity: argument 'audio_arr' must be a numpy.ndarray; "
                         f"given {type(audio_arr).__name__}")
    input_low, input_high = np.float64(input_low), np.float64(input_high)
    output_low, output_high = np.float64(output_low), np.float64(output_high)
    if output_type is None:
        output_type = audio_arr.dtype
    if input_low == output_low and output_low == output_high:
        return np.asarray(audio_arr, output_type)
    normalized = normalize_intensity(audio_arr, input_low, input_high)
    return (normalized * (output_high - output_low) + output_low).astype(output_type)


def _auto_scale_before(audio_arr, datatype):
    if not isinstance(audio_arr, np.ndarray):
        raise ValueError("minmax_auto_scale: argument 'audio_arr' must be a numpy.ndarray; "
                         f"given {type(audio_arr).__name__}")
    if not isinstance(datatype, (np.dtype, type)):
        raise ValueError("minmax_auto_scale: argument 'out_datatype' must be a numpy dtype or "
                         f"type; given {datatype!r}")
    if np.dtype(datatype).itemsize > 4:
        raise ValueError("minmax_auto_scale: the itemsize of 'out_datatype' must be at most 4; "
                         f"given {np.dtype(datatype)}")


def _auread_before(source, raw_format_param):
    if source.ext not in (".wav", ".raw"):
        raise ValueError("auread: only .wav and .raw audio are supported; the source's "
                         f"extension is {source.ext!r}")
    if source.ext == ".raw" and raw_format_param is None:
        raise ValueError("auread: .raw audio needs raw_format_param with sample_width, "
                         "frame_rate and channels")


def _auread_after(audio, channel_first):
    if channel_first and audio.ndim == 2:
        audio = audio.transpose((1, 0))
    return audio


def _ausave_before(path, audio_arr, channel_first):
    if not isinstance(audio_arr, np.ndarray):
        raise ValueError("ausave: argument 'audio_arr' must be a numpy.ndarray; given "
                         f"{type(audio_arr).__name__}")
    if audio_arr.ndim != 2:
        raise ValueError("ausave: argument 'audio_arr' must be 2-D (samples, channels); given "
                         f"shape {audio_arr.shape}")
    file_path = path if isinstance(path, str) else path.name
    os.makedirs(os.path.dirname(os.path.abspath(file_path)), exist_ok=True)
    ext = os.path.splitext(file_path)[-1]
    if ext != ".wav":
        raise ValueError(f"ausave: only .wav files can be written; given {file_path!r}")
    if audio_arr.dtype.itemsize > 4:
        raise ValueError("ausave: the itemsize of audio_arr's dtype must be at most 4; given "
                         f"{audio_arr.dtype}")
    if channel_first:
        audio_arr = audio_arr.transpose((1, 0))
    return audio_arr


def _auresize_before(audio_arr, size, channel_first):
    if not isinstance(audio_arr, np.ndarray):
        raise ValueError("auresize: argument 'audio_arr' must be a numpy.ndarray; given "
                         f"{type(audio_arr).__name__}")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(f"auresize: argument 'size' must be (samples, channels); given {size!r}")
    if audio_arr.dtype not in (np.uint8, np.int16):
        audio_arr = np.asarray(audio_arr, np.float32)
    if channel_first and audio_arr.ndim == 2:
        audio_arr = audio_arr.transpose((1, 0))
    return audio_arr
