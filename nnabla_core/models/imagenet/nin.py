"""Network in Network (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class NIN(ImageNetBase):
    """Network in Network (Lin et al., https://arxiv.org/abs/1312.4400), from nnabla's
    published file.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load the published parameters (default: True unless
            ``NNABLA_MODELS_PRETRAINED=0``); ``pretrained=False`` is not available for
            this model yet (its architecture is not written here).
    """

    _KEY_VARIABLE = {
        "classifier": "NIN/Reshape",
        "pool": "NIN/AveragePooling",
        "lastconv": "NIN/Convolution_3",
        "lastconv+relu": "NIN/ReLU_3",
    }
    _nnp_input = "TrainingInput"
    _augmentation = "ImageAugmentationX"
    _pool_name = 'NIN/AveragePooling'
    _dropouts = ('NIN/Dropout',)

    _published = "NIN"
    _input_size = (3, 227, 227)
