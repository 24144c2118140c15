"""Image backend on pillow: 8-bit images only."""
from __future__ import annotations

import numpy as np
from PIL import Image, UnidentifiedImageError

from .common import (BackendRefusal, check_imread_args, finish_imread, finish_imresize,
                     prepare_imresize, prepare_imsave)
from .image_utils_backend import ImageUtilsBackend

_READABLE = (".bmp", ".dib", ".eps", ".gif", ".icns", ".ico", ".jpeg", ".jpg", ".msp", ".png",
             ".ppm", ".pbm", ".pgm", ".pnm", ".tif", ".tiff")
_SIXTEEN_BIT_HINT = "install pypng or opencv-python for 16-bit images"


def _to_rgb_array(image, grayscale, num_channels, return_palette_indices):
    """The ``(H, W[, C])`` uint8 array of a pillow image, converted as imread asks."""
    if image.mode == "I" or image.mode.startswith("I;16"):
        # nnabla lets pillow truncate 16-bit values to their low byte here; we refuse
        raise BackendRefusal(f"a 16-bit image (pillow mode {image.mode}) is read only with "
                             "as_uint16=True; " + _SIXTEEN_BIT_HINT)
    if image.mode == "P" and not return_palette_indices:
        # Palette images read as their colours, not their palette indices.
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    if grayscale:
        gray = np.asarray(image.convert("L"))
        if num_channels > 0:
            gray = np.broadcast_to(gray[..., np.newaxis], gray.shape + (num_channels,))
        return gray.astype(np.uint8)
    if num_channels in (3, 4):
        image = image.convert("RGB" if num_channels == 3 else "RGBA")
    return np.asarray(image).astype(np.uint8)


def _resize_plane(plane, size, resample):
    """Resize one ``(H, W)`` uint8 or float32 array, or an ``(H, W, C)`` uint8 one."""
    return np.array(Image.fromarray(plane).resize(size, resample=resample))


class PilBackend(ImageUtilsBackend):
    """Reads and writes 8-bit images with pillow and resizes any image.

    Interpolations: ``nearest``, ``box``, ``bilinear``, ``hamming``, ``bicubic``,
    ``lanczos``.
    """

    _interpolations_map = {
        "nearest": Image.Resampling.NEAREST,
        "box": Image.Resampling.BOX,
        "bilinear": Image.Resampling.BILINEAR,
        "hamming": Image.Resampling.HAMMING,
        "bicubic": Image.Resampling.BICUBIC,
        "lanczos": Image.Resampling.LANCZOS,
    }

    def accept(self, path, ext, operator):
        if operator in ("resize", "save") or ext in _READABLE:
            return "OK"
        return "NG"

    def imread(self, path, grayscale=False, size=None, interpolate="bilinear",
               channel_first=False, as_uint16=False, num_channels=-1,
               return_palette_indices=False):
        """Read an 8-bit image as uint8; see ``nnabla.utils.image_utils.imread``.

        ``return_palette_indices=True`` reads a palette ("P" mode) image as its ``(H, W)``
        palette indices.
        """
        if as_uint16:
            raise BackendRefusal("pillow reads 8-bit images only (as_uint16=True); "
                                 + _SIXTEEN_BIT_HINT)
        check_imread_args(grayscale, num_channels)
        try:
            image = Image.open(path)
        except UnidentifiedImageError as error:
            raise BackendRefusal(f"pillow cannot decode it ({error})") from error
        with image:
            img = _to_rgb_array(image, grayscale, num_channels, return_palette_indices)
        return finish_imread(img, size, interpolate, channel_first, self.imresize)

    def imsave(self, path, img, channel_first=False, as_uint16=False, auto_scale=True):
        """Save an image as 8 bits; see ``nnabla.utils.image_utils.imsave``."""
        img = prepare_imsave(img, channel_first, auto_scale)
        if img.dtype == np.uint16 or as_uint16:
            raise BackendRefusal("pillow saves 8-bit images only (uint16 image or "
                                 "as_uint16=True); " + _SIXTEEN_BIT_HINT)
        if img.dtype != np.uint8:
            img = (img * 255).astype(np.uint8)  # floats in [0, 1], checked above
        if img.ndim == 3 and img.shape[-1] == 1:
            img = img[..., 0]
        Image.fromarray(img).save(path)

    def imresize(self, img, size, interpolate="bilinear", channel_first=False):
        """Resize to ``size = (width, height)``; see ``nnabla.utils.image_utils.imresize``.

        uint8 images are resized by pillow as they are; others channel by channel in
        float32, then cast back to their dtype (integers clipped to their range).
        """
        img = prepare_imresize(img, size, channel_first, interpolate,
                               list(self._interpolations_map))
        size, resample = tuple(size), self._interpolations_map[interpolate]
        one_channel = img.ndim == 3 and img.shape[-1] == 1
        planar = img[..., 0] if one_channel else img
        if planar.dtype == np.uint8:
            resized = _resize_plane(planar, size, resample)
        else:
            as_float = planar.astype(np.float32)
            if as_float.ndim == 2:
                resized = _resize_plane(as_float, size, resample)
            else:
                resized = np.stack([_resize_plane(as_float[..., c], size, resample)
                                    for c in range(as_float.shape[-1])], axis=-1)
            if np.issubdtype(planar.dtype, np.integer):
                limits = np.iinfo(planar.dtype)
                resized = np.clip(resized, limits.min, limits.max)
            resized = resized.astype(planar.dtype)
        if one_channel:
            resized = resized[..., np.newaxis]
        return finish_imresize(resized, channel_first)
