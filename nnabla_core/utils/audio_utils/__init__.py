"""Audio reading, writing and resampling (``nnabla.utils.audio_utils``).

Arrays are ``(samples, channels)`` unless ``channel_first=True``. The backend is pydub
(``pip install pydub``); without it :func:`auread` and friends raise
``ModuleNotFoundError`` with that hint, and ``nnabla.utils.data_source_loader`` reads WAV
files with scipy instead.
"""
from __future__ import annotations

import numpy as np

from . import common  # noqa: F401  (nnabla exposes audio_utils.common)
from .backend_manager import backend_manager
from .common import _auto_scale_before, rescale_intensity


def set_backend(backend):
    """Use ``backend`` (``'pydub'``).

    Raises:
        ValueError: The backend is not installed.
    """
    backend_manager.backend = backend


def get_backend():
    """str: The backend in use (None when none is installed)."""
    return backend_manager.backend


def get_available_backends():
    """list of str: The installed backends."""
    return backend_manager.get_available_backends()


def minmax_auto_scale(audio_arr, out_datatype):
    """Rescale ``audio_arr`` from its [min, max] to the full range of ``out_datatype``.

    Args:
        audio_arr (numpy.ndarray): The samples.
        out_datatype (numpy.dtype or type): Result dtype, at most 4 bytes (``uint8``,
            ``int16``, ``int32``, ``float32``...).

    Returns:
        numpy.ndarray: ``(a - a.min()) / (a.max() - a.min()) * (hi - lo) + lo`` with
        ``lo, hi`` the limits of ``out_datatype``.

    Example:
        >>> import numpy as np
        >>> minmax_auto_scale(np.array([0.0, 0.5, 1.0]), np.uint8).tolist()
        [0, 127, 255]
    """
    _auto_scale_before(audio_arr, out_datatype)
    info = np.iinfo(out_datatype) if np.dtype(out_datatype).kind in "iu" \
        else np.finfo(out_datatype)
    return rescale_intensity(audio_arr, input_low=audio_arr.min(), input_high=audio_arr.max(),
                             output_low=info.min, output_high=info.max,
                             output_type=out_datatype)


def auread(path, channel_first=False, raw_format_param=None, **kwargs):
    """Read audio (``.wav``; ``.raw`` with ``raw_format_param``).

    Args:
        path (str or binary file object): The audio.
        channel_first (bool): Return ``(channels, samples)``.
        raw_format_param (dict or None): ``sample_width``, ``channels``, ``frame_rate`` of
            ``.raw`` audio. As in nnabla 1.39, it is not passed on to the backend.

    Returns:
        numpy.ndarray: The samples, in the file's integer type.

    Raises:
        ValueError: ``path`` is a text stream, or the format is not supported.
    """
    from nnabla.utils._resource_files import ResourceFileReader
    source = ResourceFileReader(path)
    return backend_manager.module.auread(source, channel_first=channel_first,
                                         raw_format_param=None, **kwargs)


def ausave(path, audio_arr, channel_first=False, frame_rate=48000, **kwargs):
    """Write ``audio_arr`` (``(samples, channels)``, integer samples) as a ``.wav`` file.

    Args:
        path (str): Output path.
        audio_arr (numpy.ndarray): The samples (itemsize at most 4).
        channel_first (bool): ``audio_arr`` is ``(channels, samples)``.
        frame_rate (int): Sample rate.
    """
    backend_manager.module.ausave(path, audio_arr, channel_first=channel_first,
                                  frame_rate=frame_rate, **kwargs)


def auresize(audio_arr, size, channel_first=False, **kwargs):
    """Resample ``audio_arr`` to ``size = (samples, channels)``.

    Returns:
        numpy.ndarray: ``(samples, channels)`` (as pydub gives it).
    """
    return backend_manager.module.auresize(audio_arr, size, channel_first=channel_first,
                                           **kwargs)


auwrite = ausave
auload = auread
