"""Image backend on OpenCV: 8- and 16-bit images, read, written and resized."""
from __future__ import annotations

import cv2
import numpy as np

from nnabla.logger import logger

from .common import (BackendRefusal, check_imread_args, check_type_and_cast_if_necessary,
                     finish_imread, finish_imresize, prepare_imresize, prepare_imsave,
                     upscale_pixel_intensity)
from .image_utils_backend import ImageUtilsBackend

_RECOMMENDED = (".bmp", ".dib", ".ppm", ".pbm", ".pgm", ".sr", ".ras")
_READABLE = (".jpg", ".jpeg", ".png", ".tif", ".tiff")

# OpenCV's colour conversion from (source channels, requested num_channels); a 1 in the
# request adds a channel axis after the conversion to gray.
_CONVERSIONS = {
    (0, 3): cv2.COLOR_GRAY2RGB, (0, 4): cv2.COLOR_GRAY2RGBA,
    (3, -1): cv2.COLOR_BGR2RGB, (3, 3): cv2.COLOR_BGR2RGB, (3, 4): cv2.COLOR_BGR2RGBA,
    (3, 0): cv2.COLOR_BGR2GRAY, (3, 1): cv2.COLOR_BGR2GRAY,
    (4, -1): cv2.COLOR_BGRA2RGBA, (4, 4): cv2.COLOR_BGRA2RGBA, (4, 3): cv2.COLOR_BGRA2RGB,
    (4, 0): cv2.COLOR_BGRA2GRAY, (4, 1): cv2.COLOR_BGRA2GRAY,
}


def _decode(path, flags):
    if hasattr(path, "read"):
        return cv2.imdecode(np.frombuffer(path.read(), np.uint8), flags)
    return cv2.imread(str(path), flags)


def _name(path):
    return getattr(path, "name", "<file object>") if hasattr(path, "read") else str(path)


def _to_rgb(img, num_channels):
    """OpenCV's BGR(A) or gray ``(H, W[, C])`` image with ``num_channels`` RGB(A) channels."""
    channels = 0 if img.ndim == 2 else img.shape[-1]
    key = (channels, num_channels)
    if key in _CONVERSIONS:
        img = cv2.cvtColor(img, _CONVERSIONS[key])
    elif not (channels == 0 and num_channels in (-1, 0, 1)):
        raise BackendRefusal(f"cannot convert {channels} channels to {num_channels}")
    if num_channels == 1:
        img = img[..., np.newaxis]
    return img


class Cv2Backend(ImageUtilsBackend):
    """Reads, writes and resizes 8- and 16-bit images with OpenCV.

    Interpolations: ``nearest``, ``bilinear``, ``bicubic``, ``lanczos``.
    """

    _interpolations_map = {
        "nearest": cv2.INTER_NEAREST,
        "bilinear": cv2.INTER_LINEAR,
        "bicubic": cv2.INTER_CUBIC,
        "lanczos": cv2.INTER_LANCZOS4,
    }

    def accept(self, path, ext, operator):
        if operator in ("resize", "save"):
            return "OK"
        if ext in _RECOMMENDED:
            return "Recommended"
        return "OK" if ext in _READABLE else "NG"

    def imread(self, path, grayscale=False, size=None, interpolate="bilinear",
               channel_first=False, as_uint16=False, num_channels=-1,
               return_palette_indices=False):
        """Read an image as RGB(A) or gray; see ``nnabla.utils.image_utils.imread``."""
        if return_palette_indices:
            raise BackendRefusal("OpenCV does not return palette indices")
        check_imread_args(grayscale, num_channels)
        # ANYDEPTH: a 16-bit file stays 16-bit in gray too, so it can be refused below
        img = _decode(path, cv2.IMREAD_GRAYSCALE | cv2.IMREAD_ANYDEPTH if grayscale
                      else cv2.IMREAD_UNCHANGED)
        if img is None:
            raise BackendRefusal(f"OpenCV could not decode {_name(path)!r}")
        if img.dtype == np.uint16 and not as_uint16:
            raise BackendRefusal("a 16-bit image is read only with as_uint16=True (its 8-bit "
                                 "range is unknown)")
        if as_uint16 and img.dtype != np.uint16:
            if img.dtype != np.uint8:
                raise BackendRefusal(f"casting a {img.dtype} image to uint16 is not safe")
            logger.warning("You want to read image as uint16, but the original bit-depth is "
                           "8 bit. All pixel values are simply increased by 256 times.")
            img = img.astype(np.uint16) * 256
        img = _to_rgb(img, num_channels)
        return finish_imread(img, size, interpolate, channel_first, self.imresize)

    def imsave(self, path, img, channel_first=False, as_uint16=False, auto_scale=True):
        """Save an 8- or 16-bit image; see ``nnabla.utils.image_utils.imsave``."""
        img = prepare_imsave(img, channel_first, auto_scale)
        if auto_scale:
            img = upscale_pixel_intensity(img, as_uint16)
        img = check_type_and_cast_if_necessary(img, as_uint16)
        if img.ndim == 3 and img.shape[-1] in (3, 4):
            img = cv2.cvtColor(img, cv2.COLOR_RGB2BGR if img.shape[-1] == 3
                               else cv2.COLOR_RGBA2BGRA)
        if not cv2.imwrite(str(path), img):
            raise OSError(f"imsave: OpenCV could not write {path!r}")

    def imresize(self, img, size, interpolate="bilinear", channel_first=False):
        """Resize to ``size = (width, height)``, keeping the dtype."""
        img = prepare_imresize(img, size, channel_first, interpolate,
                               list(self._interpolations_map))
        resized = cv2.resize(img, tuple(size),
                             interpolation=self._interpolations_map[interpolate])
        if img.ndim == 3 and resized.ndim == 2:  # OpenCV drops a single channel axis
            resized = resized[..., np.newaxis]
        return finish_imresize(resized.astype(img.dtype, copy=False), channel_first)
