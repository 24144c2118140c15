"""The pydub backend of ``nnabla.utils.audio_utils`` (reading and writing WAV needs no
ffmpeg)."""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

with warnings.catch_warnings():
    # pydub warns at import when ffmpeg is absent (WAV works without it), and imports
    # audioop, deprecated since Python 3.11 (pydub needs audioop-lts on 3.13).
    warnings.simplefilter("ignore", RuntimeWarning)
    warnings.simplefilter("ignore", DeprecationWarning)
    from pydub import AudioSegment

from .common import _auread_after, _auread_before, _auresize_before, _ausave_before


def get_nparray_from_pydub(audio_segment):
    """The samples of ``audio_segment`` as ``(samples, channels)``."""
    samples = np.array(audio_segment.get_array_of_samples())
    return samples.reshape(-1, audio_segment.channels)


def get_audiosegment_from_nparray(nparr, frame_rate=48000):
    """An ``AudioSegment`` of the ``(samples, channels)`` array ``nparr``."""
    return AudioSegment(np.ascontiguousarray(nparr).tobytes(), frame_rate=frame_rate,
                        sample_width=nparr.dtype.itemsize, channels=nparr.shape[1])


def auread(source, channel_first=False, raw_format_param=None):
    """Read ``source`` (a ``ResourceFileReader``) as ``(samples, channels)``.

    8-bit WAV samples are returned as ``uint8`` (pydub reads them as ``int8``).
    """
    _auread_before(source, raw_format_param)
    audio_format = source.ext[1:]
    with source.open() as f:
        if audio_format == "raw":
            audio = AudioSegment.from_file(f, format=audio_format, **raw_format_param)
        else:
            audio = AudioSegment.from_file(f, format=audio_format)
    audio_arr = get_nparray_from_pydub(audio)
    if audio_arr.dtype.itemsize == 1 and audio_format == "wav":
        audio_arr = audio_arr.astype(np.uint8)
    return _auread_after(audio_arr, channel_first)


def ausave(path, audio_arr, channel_first=False, frame_rate=48000):
    """Write integer ``audio_arr`` as a WAV file.

    Raises:
        ValueError: ``audio_arr`` holds floats (pydub writes integer samples only).
    """
    audio_arr = _ausave_before(path, audio_arr, channel_first)
    if audio_arr.dtype.kind == "f":
        raise ValueError("ausave: the pydub backend cannot write float samples; convert "
                         f"audio_arr ({audio_arr.dtype}) to an integer type")
    file_path = path if isinstance(path, str) else path.name
    segment = get_audiosegment_from_nparray(audio_arr, frame_rate=frame_rate)
    segment.export(path, format=os.path.splitext(file_path)[-1][1:])


def auresize(audio_arr, size, channel_first=False):
    """Resample ``audio_arr`` to ``size = (samples, channels)`` with pydub.

    Raises:
        ValueError: The channels change between two counts that are both above 1.
    """
    audio = _auresize_before(audio_arr, size, channel_first)
    new_samples, new_channels = size
    old_samples, old_channels = audio.shape
    if old_channels != 1 and new_channels != 1 and old_channels != new_channels:
        raise ValueError("auresize: pydub converts mono to multi-channel and back only; given "
                         f"{old_channels} -> {new_channels} channels")
    segment = get_audiosegment_from_nparray(audio)
    segment = segment.set_frame_rate(math.floor(48000 * new_samples / old_samples + 1))
    segment = segment.set_channels(new_channels)
    segment = segment.get_sample_slice(0, new_samples)
    return get_nparray_from_pydub(segment)
