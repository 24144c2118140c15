"""AlexNet (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class AlexNet(ImageNetBase):
    """AlexNet (Krizhevsky et al., NIPS 2012), from nnabla's published file.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``,
    ``'lastfeature'``.

    Args:
        pretrained (bool, optional): load the published parameters (default: True unless
            ``NNABLA_MODELS_PRETRAINED=0``); ``pretrained=False`` is not available for
            this model yet (its architecture is not written here).
    """

    _KEY_VARIABLE = {
        "classifier": "TrainNet/Affine_3",
        "pool": "TrainNet/MaxPooling_3",
        "lastconv": "TrainNet/Convolution_5",
        "lastconv+relu": "TrainNet/ReLU_5",
        "lastfeature": "TrainNet/Affine_2",
    }
    _nnp_input = "TrainingInput"
    _augmentation = "ImageAugmentationX"
    _pool_name = None
    _dropouts = ('TrainNet/Dropout', 'TrainNet/Dropout_2')

    _published = "AlexNet"
    _input_size = (3, 227, 227)
