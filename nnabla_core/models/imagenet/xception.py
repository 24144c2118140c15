"""Xception (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class Xception(ImageNetBase):
    """Xception (Chollet, https://arxiv.org/abs/1610.02357), from nnabla's published file.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load the published parameters (default: True unless
            ``NNABLA_MODELS_PRETRAINED=0``); ``pretrained=False`` is not available for
            this model yet (its architecture is not written here).
    """

    _KEY_VARIABLE = {
        "classifier": "Unit/Affine",
        "pool": "Unit/AveragePooling",
        "lastconv": "Unit/SeparableConv_13/SepConvBN",
        "lastconv+relu": "Unit/ReLU_14",
    }
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentation"
    _pool_name = 'Unit/AveragePooling'
    _dropouts = ('Unit/Dropout',)

    _published = "Xception"
    _input_size = (3, 299, 299)
