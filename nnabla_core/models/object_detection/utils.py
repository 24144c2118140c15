"""Pre- and post-processing for the object-detection models
(``nnabla.models.object_detection.utils``): letterboxing an image to the network's input
size, mapping the detected boxes back to the original image, drawing them."""
from __future__ import annotations

import numpy as np

from ...utils.image_utils import imresize
from .draw_utils import DrawBoundingBoxes


def draw_bounding_boxes(img, bboxes, names, colors=None, thresh=0.5):
    """Draw the detections whose category probability exceeds ``thresh``.

    Args:
        img (numpy.ndarray): ``uint8`` RGB image ``(height, width, 3)``.
        bboxes (numpy.ndarray): detections in image coordinates, one per row:
            ``x, y`` (center), ``w, h``, objectness, then one probability per category.
        names (list of str): category names.
        colors (list of tuple of 3 ints, optional): a color per category (default: random
            with a fixed seed).
        thresh (float): probability threshold.

    Returns:
        numpy.ndarray: the image with the boxes and labels.
    """
    if colors is None:
        colors = [tuple(c) for c in
                  np.random.RandomState(1223).randint(0, 256, (len(names), 3)).tolist()]
    im_h, im_w = img.shape[:2]
    draw = DrawBoundingBoxes(img, colors)
    for bb in bboxes:
        x, y, w, h = bb[:4]
        x0 = int(np.clip(x - w / 2.0, 0, im_w))
        y0 = int(np.clip(y - h / 2.0, 0, im_h))
        x1 = int(np.clip(x + w / 2.0, 0, im_w))
        y1 = int(np.clip(y + h / 2.0, 0, im_h))
        found = np.where(bb[5:] > thresh)[0]
        if len(found) == 0:
            continue
        label = ", ".join(f"{names[i]}: {bb[5 + i] * 100:.2f}%" for i in found)
        print(f"[INFO] {label}")
        draw.draw((x0, y0, x1, y1), found[0], label)
    return draw.get()


def apply_inverse_letterbox_coordinate_transform(bboxes, im_w, im_h, letterbox_w,
                                                 letterbox_h):
    """Map boxes from the letterboxed input (coordinates relative to it, in [0, 1]) to
    pixels of the original image.

    Args:
        bboxes (numpy.ndarray): rows starting with ``x, y, w, h``.
        im_w, im_h (int): the original image's size.
        letterbox_w, letterbox_h (float): the fraction of the letterbox the image fills.

    Returns:
        numpy.ndarray: a copy of ``bboxes`` with the first four columns mapped.
    """
    bboxes = np.array(bboxes, copy=True)
    x, y, w, h = (bboxes[:, i].copy() for i in range(4))
    bboxes[:, 0] = (x - (1 - letterbox_w) / 2.0) / letterbox_w * im_w
    bboxes[:, 1] = (y - (1 - letterbox_h) / 2.0) / letterbox_h * im_h
    bboxes[:, 2] = w * im_w / letterbox_w
    bboxes[:, 3] = h * im_h / letterbox_h
    return bboxes


def letterbox(img_orig, h, w):
    """Scale ``img_orig`` to fit in ``h x w`` keeping its aspect ratio, centered on a
    gray (127) canvas.

    Args:
        img_orig (numpy.ndarray): ``uint8`` image ``(height, width, 3)``.
        h, w (int): the canvas size (multiples of 32 for YoloV2).

    Returns:
        tuple: (canvas, width of the scaled image, its height).
    """
    if img_orig.dtype != np.uint8:
        raise ValueError(f"letterbox: the image must be uint8; given {img_orig.dtype}")
    im_h, im_w = img_orig.shape[:2]
    if w / im_w < h / im_h:
        new_w, new_h = w, int(im_h * w / im_w)
    else:
        new_w, new_h = int(im_w * h / im_h), h
    patch = imresize(img_orig, (new_w, new_h))
    img = np.full((h, w, 3), 127, np.uint8)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    img[y0:y0 + new_h, x0:x0 + new_w] = patch
    return img, new_w, new_h


class LetterBoxTransform:
    """A letterboxed copy of an image (attribute ``image``) and the inverse mapping of box
    coordinates.

    Args:
        image (numpy.ndarray): ``uint8`` RGB image.
        height, width (int): the letterbox size.
    """

    def __init__(self, image, height, width):
        self.height, self.width = height, width
        self.im_h, self.im_w = image.shape[:2]
        self.image, self.new_w, self.new_h = letterbox(image, height, width)

    def inverse_coordinate_transform(self, coords):
        """Map boxes (``N x M`` array, ``M >= 4``, starting with the center ``x, y`` and
        ``w, h`` relative to the letterbox) to pixels of the original image."""
        return apply_inverse_letterbox_coordinate_transform(
            coords, self.im_w, self.im_h, self.new_w / self.width, self.new_h / self.height)
