"""SENet (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class SENet(ImageNetBase):
    """SENet (Hu et al., https://arxiv.org/abs/1709.01507), SENet-154, from nnabla's published file.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load the published parameters (default: True unless
            ``NNABLA_MODELS_PRETRAINED=0``); ``pretrained=False`` is not available for
            this model yet (its architecture is not written here).
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "Add2_7_RepeatStart_4[1]",
        "lastconv+relu": "ReLU_25_RepeatStart_4[1]",
    }
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentationX"
    _pool_name = 'AveragePooling'
    _dropouts = ('Dropout',)

    _published = "SENet-154"
