"""SENet-154 (``nnabla.models.imagenet.SENet``)."""
from __future__ import annotations

from .base import ImageNetBase
from .resnet import _ADD, _RELU_OUT, _REPEAT, bottleneck_numbers

_BLOCKS = (3, 8, 36, 3)
_SE_POOL = (56, 28, 14, 7)   # spatial size of each stage at the 224x224 input


class SENet(ImageNetBase):
    """SENet-154 (Hu et al., Squeeze-and-Excitation Networks,
    https://arxiv.org/abs/1709.01507).

    A ResNeXt-like network (64 groups) whose blocks rescale their channels by a
    squeeze-and-excitation branch (average pooling, two 1x1 convolutions, sigmoid). The
    squeeze poolings have the fixed size of the 224x224 input, so other sizes are refused
    even with ``force_global_pooling`` (as with nnabla's published file).

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'lastconv'``: the input of that pooling, before ReLU.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    Args:
        pretrained (bool, optional): load nnabla's published parameters
            (``SENet-154.nnp``), downloading them when missing; False builds the same
            architecture with fresh parameters. Default: the environment variable
            ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import SENet
        >>> nn.clear_parameters()
        >>> SENet(pretrained=False)(use_up_to='pool').shape
        (1, 2048, 1, 1)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "Add2_7_RepeatStart_4[1]",
        "lastconv+relu": "ReLU_25_RepeatStart_4[1]",
    }
    _dropouts = ("Dropout",)
    _published = "SENet-154"

    def _architecture(self, b, x):
        # ResNet-50's layers keep ResNet-50's numbers (its keys are SENet's); the layers
        # SENet adds (two stem convolutions, the squeeze-and-excitation branches) take the
        # next free numbers, as Neural Network Console numbers layers added to a project.
        b.reserved.update(_n(kind, i) for kind, last in (("Convolution", 29),
                                                         ("BatchNormalization", 29),
                                                         ("ReLU", 25), ("Add2", 8))
                          for i in range(1, last + 1))
        b.reserved.update(("MaxPooling", "AveragePooling", "Dropout", "Affine"))
        h = x
        for i, (maps, stride) in enumerate(((64, 2), (64, 1), (128, 1))):
            conv = "Convolution" if i == 0 else b.auto("Convolution")
            bn = "BatchNormalization" if i == 0 else b.auto("BatchNormalization")
            h = b.conv(conv, h, maps, (3, 3), (1, 1), (stride, stride))
            h = b.relu("ReLU" if i == 0 else b.auto("ReLU"), b.bn(bn, h))
        h = b.max_pool("MaxPooling", h, (3, 3), (2, 2), True, (1, 1))
        for stage, n_blocks in enumerate(_BLOCKS):
            stride = (1, 1) if stage == 0 else (2, 2)
            h = self._block(b, h, stage, stride, None)
            mark = b.mark()
            for i in range(n_blocks - 1):
                b.rewind(mark)
                h = self._block(b, h, stage, (1, 1), (_REPEAT[stage], i))
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        h = b.dropout("Dropout", h, 0.2)
        return b.affine("Affine", h, 1000)

    @staticmethod
    def _block(b, x, stage, stride, rep):
        planes = 64 * 2 ** stage
        short_n, conv_ns, relu_ns = bottleneck_numbers(stage, rep)

        def conv_bn(h, number, maps, kernel, pad, conv_stride=(1, 1), group=1):
            h = b.conv(_n("Convolution", number), h, maps, kernel, pad, conv_stride, group,
                       rep=rep)
            return b.bn(_n("BatchNormalization", number), h, rep=rep)

        shortcut = x
        if short_n is not None:   # a 3x3 projection, but 1x1 in the first stage
            k = 1 if stage == 0 else 3
            shortcut = conv_bn(x, short_n, planes * 4, (k, k), (k // 2, k // 2), stride)
        h = conv_bn(x, conv_ns[0], planes * 2, (1, 1), (0, 0))
        h = b.relu(_n("ReLU", relu_ns[0]), h, rep=rep)
        h = conv_bn(h, conv_ns[1], planes * 4, (3, 3), (1, 1), stride, group=64)
        h = b.relu(_n("ReLU", relu_ns[1]), h, rep=rep)
        h = conv_bn(h, conv_ns[2], planes * 4, (1, 1), (0, 0))
        size = _SE_POOL[stage]
        s = b.avg_pool(b.auto("AveragePooling"), h, (size, size), (size, size), rep=rep)
        s = b.conv(b.auto("Convolution"), s, planes // 4, (1, 1), with_bias=True, rep=rep)
        s = b.relu(b.auto("ReLU"), s, rep=rep)
        s = b.conv(b.auto("Convolution"), s, planes * 4, (1, 1), with_bias=True, rep=rep)
        s = b.sigmoid(b.auto("Sigmoid"), s, rep=rep)
        h = b.mul2(b.auto("Mul2"), h, s, rep=rep)
        which = 0 if rep is None else 1
        h = b.add2(_ADD[stage][which], shortcut, h, rep=rep)
        return b.relu(_RELU_OUT[stage][which], h, rep=rep)


def _n(kind, number):
    return kind if number == 1 else f"{kind}_{number}"
