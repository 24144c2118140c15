"""Pre- and post-processing for the semantic-segmentation models
(``nnabla.models.semantic_segmentation.utils``)."""
from __future__ import annotations

import numpy as np

from ...utils.image_utils import imresize, imsave
from . import image_preprocess

# RGB colors of the label values 0 (background) to 22, as nnabla draws them
_COLORS = ((0, 0, 0), (128, 0, 0), (0, 128, 0), (128, 128, 0), (0, 0, 128), (120, 0, 128),
           (0, 128, 128), (128, 128, 128), (64, 0, 0), (192, 0, 0), (64, 128, 0),
           (192, 128, 0), (64, 0, 128), (192, 0, 128), (64, 128, 128), (192, 128, 128),
           (0, 64, 0), (128, 64, 0), (0, 192, 0), (128, 192, 0), (0, 64, 128),
           (224, 224, 192), (0, 0, 0))


def get_color():
    """The color map: an RGB color per label value, shape ``(23, 3)``."""
    return np.array(_COLORS)


def pre_process_image(image, target_h, target_w):
    """The network input ``(1, c, target_h, target_w)`` from an RGB image ``(h, w, c)``
    (see :mod:`nnabla.models.semantic_segmentation.image_preprocess`)."""
    processed = image_preprocess.preprocess_image_and_label(image, target_w, target_h)
    return np.transpose(processed, (2, 0, 1))[np.newaxis]


def post_process_image(output, image, target_size):
    """Crop the label map ``output`` to the part covering the image and scale it back to
    the image's size (nearest neighbour)."""
    old = image.shape[:2]
    ratio = min(np.divide(target_size, old))
    new_h, new_w = int(old[0] * ratio), int(old[1] * ratio)
    return imresize(output[0:new_h, 0:new_w], (old[1], old[0]), interpolate="nearest")


def save_image(image_path, label, color_map=None):
    """Save the label map ``label`` ``(h, w)`` as a color image (``color_map``: a color
    per label value, default :func:`get_color`), scaled to the brightest color."""
    color_map = get_color() if color_map is None else np.asarray(color_map)
    vis = color_map[np.asarray(label).astype(int)]
    brightest = np.amax(vis)
    imsave(image_path, vis / brightest if brightest > 0 else vis.astype(np.float64))


class ProcessImage:
    """Prepare an image for the network, map the output back to it and save it.

    Args:
        image (numpy.ndarray): RGB image ``(h, w, 3)``.
        target_h, target_w (int): the network's input size (513 x 513 by default for
            DeepLabV3plus).
    """

    def __init__(self, image, target_h, target_w):
        self.image = image
        self.target_size = (target_h, target_w)
        self.target_h, self.target_w = target_h, target_w

    def pre_process(self):
        """The network input ``(1, 3, target_h, target_w)``: the image scaled to fit
        (aspect ratio kept), padded, in [-1, 1]."""
        return pre_process_image(self.image, self.target_h, self.target_w)

    def post_process(self, output):
        """The label map (``argmax`` of the output over channels, ``(target_h, target_w)``)
        cropped and scaled back to the image's size."""
        self.post_proc = post_process_image(output, self.image, self.target_size)
        return self.post_proc

    def save_segmentation_image(self, path, color_map=None):
        """Save the post-processed label map as a color image (``color_map``: a color
        per label, e.g. ``np.random.rand(40, 3)`` for 40 labels)."""
        return save_image(path, self.post_proc, color_map)
