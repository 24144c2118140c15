"""Pixel-range conversions and argument checks shared by the image backends."""
from __future__ import annotations

import binascii
import os

import numpy as np

from nnabla.logger import logger

NUM_CHANNELS_CHOICES = (-1, 0, 1, 3, 4)

# Leading bytes of the formats we recognise in file objects that carry no name.
_FILE_SIGNATURES = (
    (".png", 0, ("89504e470d0a1a0a",)),
    (".jpg", 0, ("ffd8ff",)),
    (".bmp", 0, ("424d",)),
    (".gif", 0, ("474946383761", "474946383961")),
    (".tif", 0, ("49492a00", "4d4d002a")),
    (".pgm", 0, ("50350a",)),
    (".eps", 0, ("c5d0d3c6",)),
    (".ico", 0, ("00000100",)),
    (".dcm", 0x80, ("4449434d",)),
)


class BackendRefusal(ValueError):
    """A backend cannot handle this call; the next backend that accepts it is tried."""


def get_file_extension(source):
    """The lower-case extension (``'.png'``) of a path or file object, or ``''``.

    A file object without a ``name`` is recognised by its leading bytes; its position is
    restored.
    """
    if isinstance(source, (str, os.PathLike)):
        return os.path.splitext(os.fspath(source))[1].lower()
    if not hasattr(source, "read"):
        return ""
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return os.path.splitext(name)[1].lower()
    start = source.tell()
    head = source.read(0x90)
    source.seek(start)
    for extension, offset, signatures in _FILE_SIGNATURES:
        hexadecimal = binascii.hexlify(head[offset:offset + 8]).decode("ascii")
        if any(hexadecimal.startswith(signature) for signature in signatures):
            return extension
    return ""


def normalize_pixel_intensity(img, input_low, input_high):
    """Map ``[input_low, input_high]`` to [0, 1].

    An empty range maps to 0 when ``input_low`` is 0 and to ``img / input_low`` (all 1 for a
    constant image) otherwise.
    """
    width = input_high - input_low
    if width == 0:
        return img if input_low == 0 else img / input_low
    return (img - input_low) / width


def rescale_pixel_intensity(img, input_low=0, input_high=255, output_low=0, output_high=255,
                            output_type=None):
    """Map ``[input_low, input_high]`` linearly to ``[output_low, output_high]``.

    Args:
        img (numpy.ndarray): The image.
        input_low, input_high (float): Input range.
        output_low, output_high (float): Output range.
        output_type (numpy.dtype): dtype of the result; default ``img.dtype``. A float to
            integer conversion truncates.

    Returns:
        numpy.ndarray: ``(img - input_low) / (input_high - input_low) * (output_high -
        output_low) + output_low``.

    Example:
        >>> rescale_pixel_intensity(np.array([0.0, 0.5, 1.0]), 0, 1, 0, 255, np.uint8)
        array([  0, 127, 255], dtype=uint8)
    """
    if not isinstance(img, np.ndarray):
        raise ValueError(f"rescale_pixel_intensity: argument 'img' must be a numpy.ndarray; "
                         f"given {type(img).__name__}")
    output_type = img.dtype if output_type is None else output_type
    if (input_low, input_high) == (output_low, output_high):
        return np.asarray(img, output_type)
    normalized = normalize_pixel_intensity(img, input_low, input_high)
    return (normalized * (output_high - output_low) + output_low).astype(output_type)


def upscale_pixel_intensity(img, as_uint16):
    """Scale an image to the integer range it is saved in.

    uint16 stays; uint8 is multiplied by 256 into uint16 when ``as_uint16``; float images in
    [0, 1] are multiplied by 65535 (uint16) or 255 (uint8) and truncated.
    """
    if img.dtype == np.uint16:
        return img
    if img.dtype == np.uint8:
        return img.astype(np.uint16) * 256 if as_uint16 else img
    if as_uint16:
        return (img * 65535).astype(np.uint16)
    return (img * 255).astype(np.uint8)


def check_type_and_cast_if_necessary(img, as_uint16):
    """The image in the dtype it is saved as: uint16 when ``as_uint16``, else uint8.

    Raises:
        ValueError: A uint16 image with ``as_uint16=False``: its range is unknown.
    """
    if img.dtype == np.uint16 and not as_uint16:
        raise ValueError("imsave: argument 'img' is uint16 but as_uint16 is False; pass "
                         "as_uint16=True, or cast the image to uint8 (values in [0, 255])")
    if as_uint16 and img.dtype != np.uint16:
        logger.warning("Save image as uint16, but the original input image type is not uint16")
        img = img.astype(np.uint16)
    return img


def check_imread_args(grayscale, num_channels):
    """Raise ValueError for a ``num_channels`` imread cannot produce."""
    if num_channels not in NUM_CHANNELS_CHOICES:
        raise ValueError(f"imread: argument 'num_channels' is {num_channels}; "
                         f"expected one of {list(NUM_CHANNELS_CHOICES)}")
    if not grayscale and num_channels in (0, 1):
        raise ValueError(f"imread: argument 'num_channels' is {num_channels} with "
                         "grayscale=False; expected -1, 3 or 4 (pass grayscale=True for a "
                         "one-channel image)")


def finish_imread(img, size, interpolate, channel_first, imresize):
    """Resize a read ``(H, W[, C])`` image to ``size`` and move channels first if asked."""
    if size is not None:
        img = imresize(img, size, interpolate=interpolate)
    if channel_first and img.ndim == 3:
        img = img.transpose(2, 0, 1)
    return img


def prepare_imsave(img, channel_first, auto_scale):
    """Check an image to save and return it as ``(H, W[, C])``, floats as float32.

    Raises:
        ValueError: not an array, not 2 or 3 dimensions, a float image without auto_scale or
            outside [0, 1], or a channel count other than 1 to 4.
    """
    if not isinstance(img, np.ndarray):
        raise ValueError(f"imsave: argument 'img' must be a numpy.ndarray; "
                         f"given {type(img).__name__}")
    if img.ndim not in (2, 3):
        raise ValueError(f"imsave: argument 'img' has shape {img.shape}; expected (H, W) or "
                         "(H, W, C) ((C, H, W) with channel_first=True)")
    if img.dtype not in (np.uint8, np.uint16):
        if not auto_scale:
            raise ValueError(f"imsave: argument 'img' is {img.dtype}; an image other than "
                             "uint8 or uint16 is saved only with auto_scale=True")
        if np.any(img < 0) or np.any(img > 1):
            raise ValueError(f"imsave: argument 'img' is {img.dtype} with values in "
                             f"[{img.min()}, {img.max()}]; expected values in [0, 1]")
        img = img.astype(np.float32)
    if channel_first and img.ndim == 3:
        img = img.transpose(1, 2, 0)
    if img.ndim == 3 and img.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(f"imsave: argument 'img' has {img.shape[-1]} channels (shape "
                         f"{img.shape}); expected 1 to 4")
    return img


def prepare_imresize(img, size, channel_first, interpolate, interpolations):
    """Check an image to resize and return it as ``(H, W[, C])``, floats as float32.

    Raises:
        ValueError: not an array, ``size`` not a list or tuple, not 2 or 3 dimensions, or an
            interpolation the backend lacks.
    """
    if not isinstance(img, np.ndarray):
        raise ValueError(f"imresize: argument 'img' must be a numpy.ndarray; "
                         f"given {type(img).__name__}")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise ValueError(f"imresize: argument 'size' is {size!r}; expected (width, height)")
    if img.ndim not in (2, 3):
        raise ValueError(f"imresize: argument 'img' has shape {img.shape}; expected (H, W) "
                         "or (H, W, C) ((C, H, W) with channel_first=True)")
    if interpolate not in interpolations:
        raise ValueError(f"imresize: argument 'interpolate' is {interpolate!r}; this backend "
                         f"has {', '.join(interpolations)}")
    if img.dtype not in (np.uint8, np.uint16):
        img = img.astype(np.float32)
    if channel_first and img.ndim == 3:
        img = img.transpose(1, 2, 0)
    return img


def finish_imresize(img, channel_first):
    if channel_first and img.ndim == 3:
        img = img.transpose(2, 0, 1)
    return img
