"""The interface every image backend implements."""
from __future__ import annotations

from .common import BackendRefusal


class ImageUtilsBackend:
    """An image library behind ``imread``, ``imsave`` and ``imresize``.

    The manager asks :meth:`accept` which backends take a call and tries them in order;
    a method raises :class:`BackendRefusal` (a ValueError) to hand the call to the next one.
    Arguments are those of the functions of ``nnabla.utils.image_utils``.
    """

    def accept(self, path, ext, operator):
        """How well this backend handles ``operator`` on a file with extension ``ext``.

        Args:
            path (str or file object): The file ('' for ``resize``).
            ext (str): Its lower-case extension, such as ``'.png'``.
            operator (str): ``'load'``, ``'save'`` or ``'resize'``.

        Returns:
            str: ``'Recommended'`` (tried first), ``'OK'`` or ``'NG'`` (never tried).
        """
        return "NG"

    def imread(self, path, grayscale=False, size=None, interpolate="bilinear",
               channel_first=False, as_uint16=False, num_channels=-1,
               return_palette_indices=False):
        raise BackendRefusal(f"{type(self).__name__} does not read images")

    def imsave(self, path, img, channel_first=False, as_uint16=False, auto_scale=True):
        raise BackendRefusal(f"{type(self).__name__} does not save images")

    def imresize(self, img, size, interpolate="bilinear", channel_first=False):
        raise BackendRefusal(f"{type(self).__name__} does not resize images")
