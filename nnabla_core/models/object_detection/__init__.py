"""Object-detection models (``nnabla.models.object_detection``): :class:`YoloV2`."""
from .yolov2 import YoloV2  # noqa: F401
