"""Semantic-segmentation models (``nnabla.models.semantic_segmentation``):
:class:`DeepLabV3plus`."""
from .deeplabv3plus import DeepLabV3plus  # noqa: F401
