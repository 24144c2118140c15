"""Xception (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase


class Xception(ImageNetBase):
    """Xception (Chollet, Xception: Deep Learning with Depthwise Separable Convolutions,
    https://arxiv.org/abs/1610.02357) on 299x299 inputs: entry flow (two convolutions and
    three downsampling blocks of 128, 256 and 728 channels), middle flow (eight blocks of
    three 728-channel separable convolutions), exit flow (a 728/1024 downsampling block,
    separable convolutions of 1536 and 2048 channels), global average pooling, dropout and
    the classifier. Each separable convolution (depthwise 3x3, pointwise 1x1, batch
    normalization ``SepConvBN``) is a unit ``SeparableConv_<n>``; the middle flow's eight
    blocks are the copies of one repeat block; everything is in the unit ``Unit/``.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'`` (the last
    separable convolution's batch normalization), ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load nnabla's published parameters (``Xception.nnp``),
            downloading them when missing; False builds the same architecture with fresh
            parameters. Default: the environment variable ``NNABLA_MODELS_PRETRAINED``
            (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import Xception
        >>> nn.clear_parameters()
        >>> Xception(pretrained=False)(use_up_to='lastconv+relu').shape
        (1, 2048, 10, 10)
    """

    _KEY_VARIABLE = {
        "classifier": "Unit/Affine",
        "pool": "Unit/AveragePooling",
        "lastconv": "Unit/SeparableConv_13/SepConvBN",
        "lastconv+relu": "Unit/ReLU_14",
    }
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentation"
    _pool_name = "Unit/AveragePooling"
    _dropouts = ("Unit/Dropout",)

    _published = "Xception"
    _input_size = (3, 299, 299)

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = "Unit/"
        h = x
        for maps, stride in ((32, 2), (64, 1)):
            h = b.conv(b.auto("Convolution"), h, maps, (3, 3), (0, 0), (stride, stride))
            h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), h))
        for index, maps in enumerate((128, 256, 728)):
            h = _downsampling_block(b, h, maps, maps, relu_first=index > 0)
        mark = b.mark()
        for i in range(8):
            b.rewind(mark)
            rep = ("RepeatStart", i)
            y = h
            for _ in range(3):
                y = b.relu(b.auto("ReLU"), y, rep=rep)
                y = _separable(b, y, 728, rep)
            h = b.add2(b.auto("Add2"), h, y, rep=rep)
        h = _downsampling_block(b, h, 728, 1024, relu_first=True)
        h = b.relu(b.auto("ReLU"), _separable(b, h, 1536))
        h = b.relu("ReLU_14", _separable(b, h, 2048, name="SeparableConv_13"))
        h = b.avg_pool("AveragePooling", h, (10, 10), (10, 10), False)
        h = b.dropout("Dropout", h, 0.5)
        return b.affine("Affine", h, 1000)


def _separable(b, x, maps, rep=None, name=None):
    """Depthwise 3x3 and pointwise 1x1 convolutions (no biases), batch normalization."""
    with b.unit(name or b.auto("SeparableConv"), rep):
        h = b.depthwise("DepthwiseConvolution", x, (3, 3), (1, 1))
        h = b.conv("Convolution", h, maps, (1, 1))
        return b.bn("SepConvBN", h)


def _downsampling_block(b, x, maps1, maps2, relu_first):
    """Two separable convolutions and a 3x3 max pooling of stride 2, plus a strided 1x1
    projection of the input."""
    shortcut = b.conv(b.auto("Convolution"), x, maps2, (1, 1), (0, 0), (2, 2))
    shortcut = b.bn(b.auto("BatchNormalization"), shortcut)
    h = x
    if relu_first:
        h = b.relu(b.auto("ReLU"), h)
    h = b.relu(b.auto("ReLU"), _separable(b, h, maps1))
    h = _separable(b, h, maps2)
    h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2), True, (1, 1))
    return b.add2(b.auto("Add2"), shortcut, h)
