"""Readers of data-set files (``nnabla.utils.data_source_loader``).

:class:`FileReader` opens files relative to a base location (a local path, an
``http(s)://`` URL or an ``s3://`` URI), :class:`ResourceFileReader` wraps a path or a
binary file object together with its extension, and :func:`load` maps a file extension
to the loader that turns the file into a numpy array (images through
``nnabla.utils.image_utils``' configured backend, CSV, ``.npy`` and audio).
"""
from __future__ import annotations

import csv

import numpy

from ._resource_files import (FileReader, ResourceFileReader,  # noqa: F401 (nnabla's names)
                              get_file_extension)


def _source_name(file):
    return getattr(file, "name", None) or repr(file)


def load_image_imread(file, shape=None, max_range=1.0):
    """Read an image as a channel-first array.

    Args:
        file (str or file object): The image.
        shape (tuple of int or None): ``(channels, height, width)`` of the result; the
            image is resized when the size differs. None keeps the file's size.
        max_range (float): Values are scaled to ``[0, max_range]`` (from 0..255, or
            0..65535 for 16-bit images); a negative value keeps the raw values.

    Returns:
        numpy.ndarray: ``(channels, height, width)``.

    Raises:
        ValueError: The image does not decode, or ``shape`` asks for another number of
            channels than the image has.
    """
    from nnabla.utils.image_utils import imread, imresize
    try:
        img = imread(file)
    except Exception as error:
        raise ValueError(f"load_image: cannot decode image {_source_name(file)!r}: "
                         f"{error}") from error
    if img.ndim == 2:
        img = img[:, :, None]
        gray = True
    else:
        gray = False
    height, width, channels = img.shape
    out_channels, out_height, out_width = (channels, height, width) if shape is None \
        else tuple(shape)
    if out_channels != channels:
        raise ValueError(f"load_image: image {_source_name(file)!r} has {channels} channel(s); "
                         f"shape={tuple(shape)} asks for {out_channels}")
    if (out_height, out_width) != (height, width):
        # imresize takes (width, height); nnabla 1.39 passes (height, width) here, which
        # transposes gray images and fails for color ones
        img = imresize(img[:, :, 0] if gray else img, (out_width, out_height))
        img = img.reshape(out_height, out_width, out_channels)
    img = img.transpose(2, 0, 1)
    if max_range < 0:
        return img
    full_scale = 65535.0 if img.dtype == numpy.uint16 else 255.0
    return img if max_range == full_scale else img * (max_range / full_scale)


def load_image(file, shape=None, normalize=False):
    """Read an image as ``(channels, height, width)``; ``normalize`` scales to [0, 1]."""
    return load_image_imread(file, shape, 1.0 if normalize else -1)


def load_csv(file, shape=None, normalize=False):
    """Read a numeric CSV file (binary file object) into a float64 array.

    Raises:
        ValueError: A cell is not a number, rows have different lengths, or the values
            do not fit ``shape``; the message names the file.
    """
    name = _source_name(file)
    rows = []
    text = [line.decode("utf-8") for line in file.readlines()]
    for line_number, row in enumerate(csv.reader(text), start=1):
        if row:
            try:
                rows.append([float(value) for value in row])
            except ValueError as error:
                raise ValueError(f"load_csv: {name!r} line {line_number}: {error}") from None
    try:
        values = numpy.array(rows)
        return values if shape is None else values.reshape(shape)
    except ValueError as error:
        raise ValueError(f"load_csv: cannot make an array of {name!r}: {error}") from None


def load_npy(path, shape=None, normalize=False):
    """Read a ``.npy`` file, reshaped to ``shape`` when given."""
    values = numpy.load(path, allow_pickle=True)
    return values if shape is None else values.reshape(shape)


def load_wav(path, shape=None, normalize=False):
    """Read a WAV file with scipy as ``(samples, channels)``."""
    import scipy.io.wavfile
    wav = scipy.io.wavfile.read(path)[1]
    if shape is not None:
        return wav.reshape(shape)
    return wav.reshape(-1, 1) if wav.ndim == 1 else wav


def _pydub_available():
    from nnabla.utils import audio_utils
    return "pydub" in audio_utils.get_available_backends()


def load_audio_pydub(path, shape=None, normalize=False):
    """Read audio with ``nnabla.utils.audio_utils``, resized to ``shape`` when given."""
    from nnabla.utils.audio_utils import auread, auresize
    audio = auread(path)
    return auresize(audio, shape) if shape else audio


def load_audio(file, shape=None, normalize=False):
    """Read audio with pydub when installed, otherwise the WAV reader of scipy."""
    if _pydub_available():
        return load_audio_pydub(file, shape, normalize)
    return load_wav(file, shape, normalize)


_load_functions = {
    ".bmp": load_image, ".jpg": load_image, ".jpeg": load_image, ".png": load_image,
    ".gif": load_image, ".tif": load_image, ".tiff": load_image, ".dcm": load_image,
    ".csv": load_csv, ".npy": load_npy, ".wav": load_audio,
}


def load(ext):
    """The loader for files with extension ``ext`` (``'.png'``...).

    A callback module (``nnabla.utils.callback.get_load_image_func``) may supply its own.

    Raises:
        ValueError: No loader handles ``ext``.
    """
    import nnabla.utils.callback as callback
    func = callback.get_load_image_func(ext)
    if func is not None:
        return func
    if ext in _load_functions:
        return _load_functions[ext]
    raise ValueError(f'File format with extension "{ext}" is not supported '
                     f"(supported: {', '.join(sorted(_load_functions))}).")


def _download_hook(bar):
    last_block = [0]

    def inner(block=1, block_size=1, total_size=None):
        if total_size is not None:
            bar.total = total_size
        bar.update((block - last_block[0]) * block_size)
        last_block[0] = block
    return inner
