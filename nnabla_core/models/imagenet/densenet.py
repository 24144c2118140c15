"""DenseNet-161 (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class DenseNet(ImageNetBase):
    """DenseNet-161 (Huang et al., https://arxiv.org/abs/1608.06993), from nnabla's published file.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load the published parameters (default: True unless
            ``NNABLA_MODELS_PRETRAINED=0``); ``pretrained=False`` is not available for
            this model yet (its architecture is not written here).
    """

    _KEY_VARIABLE = {
        "classifier": "DenseNet/Affine",
        "pool": "DenseNet/AveragePooling_4",
        "lastconv": "DenseNet/BatchNormalization_5",
        "lastconv+relu": "DenseNet/ReLU_5",
    }
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentationX"
    _pool_name = 'DenseNet/AveragePooling_4'
    _dropouts = ()

    _published = "DenseNet-161"
