"""MobileNet and MobileNetV2 (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase

# (expansion t, output channels c, repeats n, first stride s) of MobileNetV2's stages
_V2_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
              (6, 160, 3, 2), (6, 320, 1, 1))


# (output channels, stride) of MobileNet's depthwise-separable blocks; the five 512-channel
# blocks of stride 1 form one repeat block in the published file (which is why its last
# batch normalization is BatchNormalization_19 though the network has 27 of them).
_V1_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), "repeat",
              (1024, 2), (1024, 1))


def _n(kind, number):
    return kind if number == 1 else f"{kind}_{number}"


class MobileNet(ImageNetBase):
    """MobileNet, width 1.0 (Howard et al., https://arxiv.org/abs/1704.04861).

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'`` (the last
    pointwise convolution's batch normalization), ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): as for :class:`ResNet` (file ``MobileNet.nnp``).

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import MobileNet
        >>> nn.clear_parameters()
        >>> MobileNet(pretrained=False)(use_up_to='lastconv+relu').shape
        (1, 1024, 7, 7)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "BatchNormalization_19",
        "lastconv+relu": "ReLU_19",
    }

    _published = "MobileNet"

    def _architecture(self, b, x):
        h = b.conv("Convolution", x, 32, (3, 3), (1, 1), (2, 2))
        h = b.relu("ReLU", b.bn("BatchNormalization", h))
        number = 1    # layer numbers: a depthwise and a pointwise layer per block
        for block in _V1_BLOCKS:
            if block == "repeat":
                first = number
                for i in range(5):
                    number = first
                    h, number = self._separable(b, h, 512, 1, number, ("RepeatStart", i))
            else:
                h, number = self._separable(b, h, block[0], block[1], number, None)
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        return b.affine("Affine", h, 1000)

    @staticmethod
    def _separable(b, x, maps, stride, number, rep):
        h = b.depthwise(_n("DepthwiseConvolution", (number + 1) // 2), x, (3, 3), (1, 1),
                        (stride, stride), rep=rep)
        number += 1
        h = b.bn(f"BatchNormalization_{number}", h, rep=rep)
        h = b.relu(f"ReLU_{number}", h, rep=rep)
        h = b.conv(f"Convolution_{(number + 2) // 2}", h, maps, (1, 1), rep=rep)
        number += 1
        h = b.bn(f"BatchNormalization_{number}", h, rep=rep)
        return b.relu(f"ReLU_{number}", h, rep=rep), number


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
        for t, c, n, s in _V2_STAGES:
            for i in range(n):
                with b.unit(b.auto("InvertedResidual")):
                    h = self._inverted_residual(b, h, t, c, s if i == 0 else 1)
        h = b.conv("Convolution_2", h, 1280, (1, 1))
        h = b.relu("ReLU_2", b.bn("BatchNormalization_2", h))
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        h = b.conv("Convolution_3", h, 1000, (1, 1), with_bias=True)
        return b.reshape("Reshape", h, (h.shape[0], 1000))

    @staticmethod
    def _inverted_residual(b, x, t, c, stride):
        """One block, a unit of its own: 1x1 expansion (unless t == 1), 3x3 depthwise,
        linear 1x1 projection, and the identity shortcut where shapes allow."""
        h = x
        if t != 1:
            h = b.conv(b.auto("Convolution"), h, x.shape[1] * t, (1, 1))
            h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), h))
        h = b.depthwise(b.auto("DepthwiseConvolution"), h, (3, 3), (1, 1), (stride, stride))
        h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), h))
        h = b.conv(b.auto("Convolution"), h, c, (1, 1))
        h = b.bn(b.auto("BatchNormalization"), h)
        if stride == 1 and x.shape[1] == c:
            h = b.add2(b.auto("Add2"), x, h)
        return h
