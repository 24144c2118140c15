"""Image backend on pypng: 8- and 16-bit PNG files, read and written; no resizing."""
from __future__ import annotations

import contextlib

import numpy as np
import png

from nnabla.logger import logger

from .common import (BackendRefusal, check_imread_args, check_type_and_cast_if_necessary,
                     finish_imread, prepare_imsave, upscale_pixel_intensity)
from .image_utils_backend import ImageUtilsBackend

_GRAY_WEIGHTS = (0.299, 0.587, 0.114)  # ITU-R BT.601 luma


@contextlib.contextmanager
def _binary_file(path, mode):
    """``path`` itself when it is a file object, else the file opened in ``mode``."""
    if hasattr(path, "read") or hasattr(path, "write"):
        yield path
    else:
        with open(path, mode) as file:
            yield file


def _resize_with_best_backend(img, size, interpolate="bilinear"):
    from .. import imresize
    return imresize(img, size, interpolate=interpolate)


def _convert_channels(img, num_channels):
    """``(H, W[, C])`` to ``num_channels`` channels (-1 keeps them, 0 is 2-D)."""
    channels = 0 if img.ndim == 2 else img.shape[-1]
    if num_channels in (-1, channels):
        return img
    if channels == 0:
        return np.repeat(img[..., np.newaxis], num_channels, axis=-1)
    if channels == 2:  # grey and alpha
        rgb = np.repeat(img[..., :1], 3, axis=-1)
        return rgb if num_channels == 3 else np.concatenate([rgb, img[..., 1:]], axis=-1)
    if num_channels == 3:
        return img[..., :3]
    if num_channels == 4 and channels == 3:
        opaque = np.full(img.shape[:-1] + (1,), np.iinfo(img.dtype).max, img.dtype)
        return np.concatenate([img, opaque], axis=-1)
    raise BackendRefusal(f"cannot convert {channels} channels to {num_channels}")


def _pixels_to_array(rows, width, height, info, grayscale, as_uint16):
    """The ``(H, W[, C])`` array of the rows pypng's ``asDirect`` returns."""
    bitdepth = info["bitdepth"]
    if bitdepth == 16 and not as_uint16:
        raise BackendRefusal("a 16-bit PNG is read only with as_uint16=True")
    dtype = np.uint16 if as_uint16 else np.uint8
    img = np.vstack([np.asarray(row, dtype) for row in rows]).reshape(height, width, -1)
    if bitdepth == 8 and as_uint16:
        logger.warning("You want to read image as uint16, but the original bit-depth is 8 "
                       "bit. All pixel values are simply increased by 256 times.")
        img *= 256
    if img.shape[-1] == 1 or (grayscale and info["greyscale"]):
        return img[..., 0]
    if grayscale:
        return np.dot(img[..., :3], _GRAY_WEIGHTS).astype(dtype)
    return img


class PngBackend(ImageUtilsBackend):
    """Reads and writes 8- and 16-bit PNG files with pypng (``pip install pypng``)."""

    def accept(self, path, ext, operator):
        if operator == "load":
            return "Recommended" if ext == ".png" else "NG"
        return "OK" if operator == "save" else "NG"

    def imread(self, path, grayscale=False, size=None, interpolate="bilinear",
               channel_first=False, as_uint16=False, num_channels=-1,
               return_palette_indices=False):
        """Read a PNG as uint8, or uint16 with ``as_uint16``; see ``image_utils.imread``."""
        if return_palette_indices:
            raise BackendRefusal("pypng does not return palette indices")
        check_imread_args(grayscale, num_channels)
        start = path.tell() if hasattr(path, "read") else None
        try:
            with _binary_file(path, "rb") as file:
                width, height, rows, info = png.Reader(file=file).asDirect()
                if info["bitdepth"] not in (8, 16):
                    raise BackendRefusal(f"pypng reads 8- and 16-bit PNG files only "
                                         f"({info['bitdepth']}-bit)")
                img = _pixels_to_array(rows, width, height, info, grayscale, as_uint16)
        except png.Error as error:
            if start is not None:
                path.seek(start)
            raise BackendRefusal(f"pypng cannot decode it ({error})") from error
        img = np.ascontiguousarray(_convert_channels(img, num_channels))
        return finish_imread(img, size, interpolate, channel_first, _resize_with_best_backend)

    def imsave(self, path, img, channel_first=False, as_uint16=False, auto_scale=True):
        """Save as an 8- or 16-bit PNG; see ``nnabla.utils.image_utils.imsave``."""
        img = prepare_imsave(img, channel_first, auto_scale)
        if auto_scale:
            img = upscale_pixel_intensity(img, as_uint16)
        img = check_type_and_cast_if_necessary(img, as_uint16)
        channels = 1 if img.ndim == 2 else img.shape[-1]
        writer = png.Writer(img.shape[1], img.shape[0], greyscale=channels <= 2,
                            alpha=channels in (2, 4), bitdepth=img.itemsize * 8)
        with _binary_file(path, "wb") as file:
            writer.write(file, img.reshape(img.shape[0], -1))
