"""MobileNet and MobileNetV2 (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase

# (expansion t, output channels c, repeats n, first stride s) of MobileNetV2's stages
_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1))


class MobileNet(ImageNetBase):
    """MobileNet (Howard et al., https://arxiv.org/abs/1704.04861), from nnabla's published
    file (``pretrained=False`` is not available for it yet).

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'``,
    ``'lastconv+relu'``.
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "BatchNormalization_19",
        "lastconv+relu": "ReLU_19",
    }

    _published = "MobileNet"


class MobileNetV2(ImageNetBase):
    """MobileNetV2 (Sandler et al., https://arxiv.org/abs/1801.04381).

    Keys of ``use_up_to``: ``'classifier'`` (the final 1x1 convolution, reshaped to
    ``(batch, 1000)``), ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): as for :class:`ResNet`.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import MobileNetV2
        >>> nn.clear_parameters()
        >>> MobileNetV2(pretrained=False)(nn.Variable((1, 3, 224, 224))).shape
        (1, 1000)
    """

    _KEY_VARIABLE = {
        "classifier": "Reshape",
        "pool": "AveragePooling",
        "lastconv": "BatchNormalization_2",
        "lastconv+relu": "ReLU_2",
    }
    _nnp_input = "ImageAugmentationX"

    _published = "MobileNet-v2"

    def _configure_nnp(self, callback, input_var, training):
        callback.drop_function("ImageAugmentationX")
        callback.set_variable("ImageAugmentationX", input_var)

    def _architecture(self, b, x):
        h = b.conv("Convolution", x, 32, (3, 3), (1, 1), (2, 2))
        h = b.relu("ReLU", b.bn("BatchNormalization", h))
        number = 100            # layers no key names are numbered from here
        for t, c, n, s in _V2_STAGES:
            for i in range(n):
                h, number = self._inverted_residual(b, h, t, c, s if i == 0 else 1, number)
        h = b.conv("Convolution_2", h, 1280, (1, 1))
        h = b.relu("ReLU_2", b.bn("BatchNormalization_2", h))
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        h = b.conv("Convolution_3", h, 1000, (1, 1), with_bias=True)
        return b.reshape("Reshape", h, (h.shape[0], 1000))

    @staticmethod
    def _inverted_residual(b, x, t, c, stride, number):
        h = x
        if t != 1:
            number += 1
            h = b.conv(f"Convolution_{number}", h, x.shape[1] * t, (1, 1))
            h = b.relu(f"ReLU_{number}", b.bn(f"BatchNormalization_{number}", h))
        number += 1
        h = b.depthwise(f"DepthwiseConvolution_{number}", h, (3, 3), (1, 1), (stride, stride))
        h = b.relu(f"ReLU_{number}", b.bn(f"BatchNormalization_{number}", h))
        number += 1
        h = b.conv(f"Convolution_{number}", h, c, (1, 1))
        h = b.bn(f"BatchNormalization_{number}", h)
        if stride == 1 and x.shape[1] == c:
            h = b.add2(f"Add2_{number}", x, h)
        return h, number
