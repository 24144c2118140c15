"""Drawing labelled boxes on images (``nnabla.models.object_detection.draw_utils``), with
OpenCV when it is installed, else Pillow."""
from __future__ import annotations

import numpy as np


def _text_y(y0):
    """Put the label above the box, or inside it near the image's top edge."""
    return y0 - 15 if y0 - 15 > 15 else y0 + 15


class _DrawBoundingBoxesPil:
    """Draws on a copy of an RGB ``uint8`` image with Pillow."""

    def __init__(self, img, colors):
        from PIL import Image

        self.img = Image.fromarray(np.asarray(img))
        self.colors = colors
        self.d = None

    def draw(self, bbox, det_ind, label):
        """Draw box ``(x0, y0, x1, y1)`` in the color of category ``det_ind``, with
        ``label``."""
        from PIL import ImageDraw

        if self.d is None:
            self.d = ImageDraw.Draw(self.img)
        x0, y0, _, _ = bbox
        color = tuple(int(c) for c in self.colors[det_ind])
        self.d.rectangle(tuple(bbox), outline=color)
        self.d.text((x0, _text_y(y0)), label, fill=color)

    def get(self):
        """The image with the boxes drawn so far, as a numpy array."""
        self.d = None
        return np.array(self.img)


class _DrawBoundingBoxesCv2:
    """Draws on a copy of an RGB ``uint8`` image with OpenCV."""

    def __init__(self, img, colors):
        self.img = np.array(img, copy=True)
        self.colors = colors

    def draw(self, bbox, det_ind, label):
        """Draw box ``(x0, y0, x1, y1)`` in the color of category ``det_ind``, with
        ``label``."""
        import cv2

        x0, y0, x1, y1 = bbox
        color = tuple(int(c) for c in self.colors[det_ind])
        cv2.rectangle(self.img, (x0, y0), (x1, y1), color, 2)
        cv2.putText(self.img, label, (x0, _text_y(y0)), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    color, 2)

    def get(self):
        """The image with the boxes drawn so far."""
        return self.img


try:
    import cv2  # noqa: F401
    DrawBoundingBoxes = _DrawBoundingBoxesCv2
except ImportError:
    DrawBoundingBoxes = _DrawBoundingBoxesPil
