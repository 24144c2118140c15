"""Input preparation of the semantic-segmentation models
(``nnabla.models.semantic_segmentation.image_preprocess``): scale to fit, pad with the
mean value, map to [-1, 1]."""
from __future__ import annotations

import numpy as np

from ...utils.image_utils import imresize


def resize(image, desired_size):
    """Scale ``image`` (``(h, w, c)``) to fit ``desired_size`` ``(height, width)`` keeping
    the aspect ratio (nearest neighbour for one channel, i.e. label maps)."""
    old = image.shape[:2]
    ratio = min(np.divide(desired_size, old))
    new_h, new_w = int(old[0] * ratio), int(old[1] * ratio)
    if image.shape[2] == 1:
        return imresize(image, (new_w, new_h), interpolate="nearest")
    return imresize(image, (new_w, new_h))


def zero_mean_unit_range(image):
    """Map [0, 255] to [-1, 1]."""
    return (2.0 / 255.0) * image - 1.0


def cast(image):
    """``image`` as float32."""
    return image.astype(np.float32)


def pad(image, desired_size=(513, 513), value=None):
    """Pad ``image`` at the bottom and right to ``desired_size`` ``(height, width)`` with
    ``value`` (default 127.5, the mean pixel value)."""
    value = 127.5 if value is None else value
    old = image.shape[:2]
    extra = [max(d - o, 0) for o, d in zip(old, desired_size)]
    return np.pad(image, ((0, extra[0]), (0, extra[1]), (0, 0)), mode="constant",
                  constant_values=value)


def preprocess_image_and_label(image, target_width=513, target_height=513):
    """The network input ``(target_height, target_width, c)`` float32 in [-1, 1] from an
    RGB image ``(h, w, c)``."""
    image = resize(cast(image), (target_height, target_width))
    image = pad(image, desired_size=(target_height, target_width))
    return zero_mean_unit_range(image)
