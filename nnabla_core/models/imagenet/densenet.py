"""DenseNet-161 (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase

_LAYERS = (6, 12, 36, 24)   # dense layers of the four blocks
_GROWTH = 48
_BOTTLENECK = 4 * _GROWTH   # channels of each dense layer's 1x1 convolution
_REPEAT = ("RepeatStart", "RepeatStart_2", "RepeatStart_3", "RepeatStart_4")


def _n(kind, number):
    return kind if number == 1 else f"{kind}_{number}"


class DenseNet(ImageNetBase):
    """DenseNet-161 (Huang et al., Densely Connected Convolutional Networks,
    https://arxiv.org/abs/1608.06993): growth rate 48, 96 initial channels, blocks of 6,
    12, 36 and 24 dense layers (batch normalization, ReLU, 1x1 convolution to 192
    channels, batch normalization, ReLU, 3x3 convolution to 48 channels, concatenated to
    the input), transitions halving the channels and the size.

    The variables are in the unit ``DenseNet/``; the dense layers of each block are the
    copies of a repeat block.

    Keys of ``use_up_to``: ``'classifier'``, ``'pool'``, ``'lastconv'`` (the final batch
    normalization), ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load nnabla's published parameters
            (``DenseNet-161.nnp``), downloading them when missing; False builds the same
            architecture with fresh parameters. Default: the environment variable
            ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import DenseNet
        >>> nn.clear_parameters()
        >>> DenseNet(pretrained=False)(use_up_to='lastconv+relu').shape
        (1, 2208, 7, 7)
    """

    _KEY_VARIABLE = {
        "classifier": "DenseNet/Affine",
        "pool": "DenseNet/AveragePooling_4",
        "lastconv": "DenseNet/BatchNormalization_5",
        "lastconv+relu": "DenseNet/ReLU_5",
    }
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentationX"
    _pool_name = "DenseNet/AveragePooling_4"
    _nnp_network = "Train"
    _dropouts = ()

    _published = "DenseNet-161"

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = "DenseNet/"
        # The stem, the three transitions and the head are numbered 1..5 in turn; the
        # layers of the dense blocks come after.
        b.reserved.update(b.prefix + _n(kind, i) for kind in ("BatchNormalization", "ReLU")
                          for i in range(1, 6))
        b.reserved.update(b.prefix + _n("Convolution", i) for i in range(1, 5))
        h = b.conv("Convolution", x, 2 * _GROWTH, (7, 7), (3, 3), (2, 2))
        h = b.relu("ReLU", b.bn("BatchNormalization", h))
        h = b.max_pool("MaxPooling", h, (3, 3), (2, 2), True, (1, 1))
        for block, n_layers in enumerate(_LAYERS):
            mark = b.mark()
            for i in range(n_layers):
                b.rewind(mark)
                h = _dense_layer(b, h, (_REPEAT[block], i))
            number = block + 2
            h = b.bn(_n("BatchNormalization", number), h)
            h = b.relu(_n("ReLU", number), h)
            if block == len(_LAYERS) - 1:
                break
            h = b.conv(_n("Convolution", number), h, h.shape[1] // 2, (1, 1))
            h = b.avg_pool(_n("AveragePooling", block + 1), h, (2, 2), (2, 2), False)
        h = b.avg_pool("AveragePooling_4", h, (7, 7), (7, 7), False)
        return b.affine("Affine", h, 1000)


def _dense_layer(b, x, rep):
    h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), x, rep=rep), rep=rep)
    h = b.conv(b.auto("Convolution"), h, _BOTTLENECK, (1, 1), rep=rep)
    h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), h, rep=rep), rep=rep)
    h = b.conv(b.auto("Convolution"), h, _GROWTH, (3, 3), (1, 1), rep=rep)
    return b.concat(b.auto("Concatenate"), (x, h), rep=rep)
