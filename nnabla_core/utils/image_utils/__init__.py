"""``nnabla.utils.image_utils``: read, save and resize images as numpy arrays.

Images are ``(height, width, channel)`` arrays (``(height, width)`` for gray), or
``(channel, height, width)`` with ``channel_first=True``; sizes are ``(width, height)``.
The work is done by a backend: pillow (``PilBackend``, the default, 8-bit images), and
``PngBackend`` (pypng) and ``Cv2Backend`` (OpenCV) for 16-bit images where those packages
are installed. Each call picks the backend from the file type unless :func:`set_backend`
pinned one; a backend that cannot handle a call (say pillow and a 16-bit image) hands it to
the next.
"""
from __future__ import annotations

import numpy as np

from . import backend_events  # noqa: F401  (nnabla exposes image_utils.backend_events)
from .backend_events.common import rescale_pixel_intensity
from .backend_manager import backend_manager

__all__ = ["imread", "imsave", "imresize", "imload", "imwrite", "set_backend", "get_backend",
           "get_available_backends", "minmax_auto_scale"]


def set_backend(backend):
    """Use the backend named ``backend`` for every call, whatever the file type.

    Args:
        backend (str): One of :func:`get_available_backends`, such as ``'PilBackend'``. Any
            other name (with a logged warning) or None goes back to choosing by file type.
    """
    backend_manager.set_backend(backend)


def get_backend():
    """The pinned backend's name, else that of the backend of the last call ('' before any).

    Returns:
        str
    """
    return backend_manager.get_backend()


def get_available_backends():
    """The names of the installed backends, such as ``['PilBackend']``.

    Returns:
        list of str
    """
    return backend_manager.get_available_backends()


def minmax_auto_scale(img, as_uint16):
    """Stretch ``[img.min(), img.max()]`` to the whole range of uint8 (or uint16).

    Args:
        img (numpy.ndarray): The image.
        as_uint16 (bool): Scale to [0, 65535] as uint16 instead of [0, 255] as uint8.

    Returns:
        numpy.ndarray: ``(img - min) / (max - min) * 255`` (or 65535), truncated.

    Example:
        >>> minmax_auto_scale(np.array([-1.0, 0.0, 1.0]), as_uint16=False)
        array([  0, 127, 255], dtype=uint8)
    """
    high, dtype = (65535, np.uint16) if as_uint16 else (255, np.uint8)
    return rescale_pixel_intensity(img, input_low=img.min(), input_high=img.max(),
                                   output_low=0, output_high=high, output_type=dtype)


def imread(path, grayscale=False, size=None, interpolate="bilinear", channel_first=False,
           as_uint16=False, num_channels=-1, **kwargs):
    """Read the image at ``path``.

    Args:
        path (str or file object): The image file.
        grayscale (bool): Convert to gray.
        size (tuple of int): Resize to ``(width, height)``; None keeps the size.
        interpolate (str): Interpolation of the resize: ``'nearest'``, ``'bilinear'``,
            ``'bicubic'``, ``'lanczos'``, and with pillow ``'box'`` and ``'hamming'``.
        channel_first (bool): Return ``(channel, height, width)``.
        as_uint16 (bool): Return uint16 (8-bit files are multiplied by 256); needs pypng or
            OpenCV.
        num_channels (int): Channels of the result: -1 keeps the file's (gray is 2-D), 0 is
            2-D gray, 1, 3 (RGB) or 4 (RGBA); 0 and 1 need ``grayscale=True``.
        return_palette_indices (bool): pillow only: read a palette image as its ``(H, W)``
            palette indices instead of its colours.

    Returns:
        numpy.ndarray: uint8, or uint16 with ``as_uint16``.

    Raises:
        ValueError: bad ``num_channels``, or no backend can read the file.
        ImportError: no image library is installed.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "x.png")
        >>> imsave(path, np.zeros((4, 6, 3), np.uint8))
        >>> imread(path, size=(3, 2), channel_first=True).shape
        (3, 2, 3)
    """
    return backend_manager.call(
        "load", path, "imread", path, grayscale=grayscale, size=size, interpolate=interpolate,
        channel_first=channel_first, as_uint16=as_uint16, num_channels=num_channels, **kwargs)


def imsave(path, img, channel_first=False, as_uint16=False, auto_scale=True, **kwargs):
    """Save ``img`` to ``path`` in the format its extension names.

    Args:
        path (str): Output file.
        img (numpy.ndarray): ``(H, W)`` or ``(H, W, C)`` with C in 1 to 4: uint8 in
            [0, 255], uint16 in [0, 65535], or any other dtype in [0, 1] (then
            ``auto_scale`` must be True).
        channel_first (bool): ``img`` is ``(C, H, W)``.
        as_uint16 (bool): Save 16 bits per channel; needs pypng or OpenCV.
        auto_scale (bool): Scale [0, 1] images to the saved range (255 or 65535) and uint8
            images to uint16 (times 256) with ``as_uint16``.

    Raises:
        ValueError: a bad shape, dtype or value range, or no backend can save it.
        ImportError: no image library is installed.
    """
    backend_manager.call("save", path, "imsave", path, img, channel_first=channel_first,
                         as_uint16=as_uint16, auto_scale=auto_scale, **kwargs)


def imresize(img, size, interpolate="bilinear", channel_first=False, **kwargs):
    """Resize ``img`` to ``size = (width, height)``, keeping its dtype.

    Args:
        img (numpy.ndarray): ``(H, W)`` or ``(H, W, C)`` image (``(C, H, W)`` with
            ``channel_first``).
        size (tuple of int): ``(width, height)`` of the result.
        interpolate (str): As in :func:`imread`.
        channel_first (bool): ``img`` and the result are ``(C, H, W)``.

    Returns:
        numpy.ndarray: ``(height, width[, C])``, or ``(C, height, width)``.

    Example:
        >>> imresize(np.zeros((4, 6, 3), np.uint8), (3, 2)).shape
        (2, 3, 3)
    """
    return backend_manager.call("resize", img, "imresize", img, size, interpolate=interpolate,
                                channel_first=channel_first, **kwargs)


imwrite = imsave
imload = imread
