"""VGG-11/13/16 (``nnabla.models.imagenet.VGG`` and aliases)."""
from __future__ import annotations

from .base import ImageNetBase

# Convolution numbers of each stage, as in the published files (VGG-11 and 13 keep
# VGG-16's numbering, so their last convolution is Convolution_12).
_CONVS = {
    11: ((1,), (3,), (5, 6), (8, 9), (11, 12)),
    13: ((1, 2), (3, 4), (5, 6), (8, 9), (11, 12)),
    16: ((1, 2), (3, 4), (5, 6, 7), (8, 9, 10), (11, 12, 13)),
}
_MAPS = (64, 128, 256, 512, 512)


def _n(kind, number):
    return kind if number == 1 else f"{kind}_{number}"


class VGG(ImageNetBase):
    """VGG with 11, 13 or 16 layers (Simonyan and Zisserman,
    https://arxiv.org/abs/1409.1556).

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'`` (the last max pooling),
    ``'lastconv'``, ``'lastconv+relu'``, ``'lastfeature'`` (the second affine layer).

    Args:
        num_layers (int): 11, 13 or 16.
        pretrained (bool, optional): as for :class:`ResNet`.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import VGG11
        >>> nn.clear_parameters()
        >>> VGG11(pretrained=False)(nn.Variable((1, 3, 224, 224)), use_up_to='pool').shape
        (1, 512, 7, 7)
    """

    _nnp_input = "TrainingInput"
    _pool_name = None
    _dropouts = ("VGG{n}/Dropout_1", "VGG{n}/Dropout_2")

    def __init__(self, num_layers=11, pretrained=None):
        if num_layers not in _CONVS:
            raise ValueError(f"VGG: num_layers must be chosen from {set(_CONVS)}; given "
                             f"{num_layers}")
        self.num_layers = num_layers
        self._load_nnp(f"VGG-{num_layers}", pretrained)
        last = 13 if num_layers == 16 else 12
        self._KEY_VARIABLE = {
            "classifier": f"VGG{num_layers}/Affine_3",
            "pool": f"VGG{num_layers}/MaxPooling_5",
            "lastconv": f"VGG{num_layers}/Convolution_{last}",
            "lastconv+relu": f"VGG{num_layers}/ReLU_{last}",
            "lastfeature": f"VGG{num_layers}/Affine_2",
        }


    def _format_dict(self):
        return {"n": self.num_layers}

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = f"VGG{self.num_layers}/"
        h = x
        for stage, numbers in enumerate(_CONVS[self.num_layers]):
            for number in numbers:
                h = b.conv(_n("Convolution", number), h, _MAPS[stage], (3, 3), (1, 1),
                           with_bias=True)
                h = b.relu(_n("ReLU", number), h)
            h = b.max_pool(_n("MaxPooling", stage + 1), h, (2, 2), (2, 2))
        h = b.relu("ReLU_14", b.affine("Affine", h, 4096))
        h = b.dropout("Dropout_1", h)
        h = b.relu("ReLU_15", b.affine("Affine_2", h, 4096))
        h = b.dropout("Dropout_2", h)
        return b.affine("Affine_3", h, 1000)


class VGG11(VGG):
    """VGG11: :class:`VGG` ``(11)``."""

    def __init__(self, pretrained=None):
        super().__init__(11, pretrained)


class VGG13(VGG):
    """VGG13: :class:`VGG` ``(13)``."""

    def __init__(self, pretrained=None):
        super().__init__(13, pretrained)


class VGG16(VGG):
    """VGG16: :class:`VGG` ``(16)``."""

    def __init__(self, pretrained=None):
        super().__init__(16, pretrained)
