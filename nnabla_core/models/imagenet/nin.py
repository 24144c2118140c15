"""Network in Network (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase

# mlpconv blocks: (channels, kernel, stride, pad) of the spatial convolution, then two 1x1
# convolutions of the same channels (the last block's second one has 1000).
_BLOCKS = ((96, 11, 4, 0), (256, 5, 1, 2), (384, 3, 1, 1), (1024, 3, 1, 1))


class NIN(ImageNetBase):
    """Network in Network (Lin et al., https://arxiv.org/abs/1312.4400), as the ImageNet
    model of the Caffe model zoo: four mlpconv blocks (a spatial convolution and two 1x1
    convolutions, all with ReLU), max poolings between them, dropout before the last, and
    a global average pooling of the 1000-channel last convolution.

    Keys of ``use_up_to``: ``'classifier'`` (the pooling reshaped to ``(batch, 1000)``),
    ``'pool'``, ``'lastconv'``, ``'lastconv+relu'``.

    Args:
        pretrained (bool, optional): load nnabla's published parameters (``NIN.nnp``),
            downloading them when missing; False builds the same architecture with fresh
            parameters. Default: the environment variable ``NNABLA_MODELS_PRETRAINED``
            (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import NIN
        >>> nn.clear_parameters()
        >>> NIN(pretrained=False)(use_up_to='lastconv').shape
        (1, 1000, 6, 6)
    """

    _KEY_VARIABLE = {
        "classifier": "NIN/Reshape",
        "pool": "NIN/AveragePooling",
        "lastconv": "NIN/Convolution_3",
        "lastconv+relu": "NIN/ReLU_3",
    }
    _nnp_input = "TrainingInput"
    _augmentation = "ImageAugmentationX"
    _pool_name = "NIN/AveragePooling"
    _dropouts = ("NIN/Dropout",)

    _published = "NIN"
    _input_size = (3, 227, 227)

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = "NIN/"
        b.reserved.update(("NIN/Convolution_3", "NIN/ReLU_3"))   # the 1000-channel layer's
        h = x
        for index, (maps, kernel, stride, pad) in enumerate(_BLOCKS):
            last = index == len(_BLOCKS) - 1
            if last:
                h = b.dropout("Dropout", h, 0.5)
            h = b.conv(b.auto("Convolution"), h, maps, (kernel, kernel), (pad, pad),
                       (stride, stride), with_bias=True)
            h = b.relu(b.auto("ReLU"), h)
            h = b.conv(b.auto("Convolution"), h, maps, (1, 1), with_bias=True)
            h = b.relu(b.auto("ReLU"), h)
            if last:
                break
            h = b.conv(b.auto("Convolution"), h, maps, (1, 1), with_bias=True)
            h = b.relu(b.auto("ReLU"), h)
            h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2))
        h = b.conv("Convolution_3", h, 1000, (1, 1), with_bias=True)
        h = b.relu("ReLU_3", h)
        h = b.avg_pool("AveragePooling", h, (6, 6), (6, 6), False)
        return b.reshape("Reshape", h, (h.shape[0], 1000))
