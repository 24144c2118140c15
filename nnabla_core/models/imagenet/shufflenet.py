"""ShuffleNet (v1, 3 groups) at widths 0.5x, 1.0x and 2.0x
(``nnabla.models.imagenet.ShuffleNet`` and aliases)."""
from __future__ import annotations

from .base import ImageNetBase

_GROUPS = 3
_UNITS = (4, 8, 4)   # units of stages 2, 3, 4: one downsampling unit, then a repeat block
# channels of the first convolution and of stages 2, 3, 4, per scaling factor
_CHANNELS = {5: (12, 120, 240, 480), 10: (24, 240, 480, 960), 20: (48, 480, 960, 1920)}
_STEM = {10: "ShuffleNet", 5: "ShuffleNet-0.5x", 20: "ShuffleNet-2.0x"}


class ShuffleNet(ImageNetBase):
    """ShuffleNet with 3 groups, at 0.5x, 1.0x or 2.0x width (Zhang et al., ShuffleNet: An
    Extremely Efficient Convolutional Neural Network for Mobile Devices,
    https://arxiv.org/abs/1707.01083, Table 1): a 3x3 convolution of stride 2 and a max
    pooling, three stages of ShuffleNet units (4, 8, 4), global average pooling and the
    classifier. A unit is a grouped 1x1 convolution (not grouped in the first unit, whose
    input has few channels), channel shuffle, 3x3 depthwise convolution, grouped 1x1
    convolution, each with batch normalization, added to the input (stride 1) or
    concatenated with its 3x3 average pooling (stride 2, the first unit of a stage), then
    ReLU; the units after the first of each stage are the copies of a repeat block.

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'lastconv'``: the input of that pooling, before ReLU (the last addition).
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    Args:
        scaling_factor (int): 10 (1.0x), 5 (0.5x) or 20 (2.0x).
        pretrained (bool, optional): load nnabla's published parameters
            (``ShuffleNet.nnp``, ``ShuffleNet-0.5x.nnp``, ``ShuffleNet-2.0x.nnp``),
            downloading them when missing; False builds the same architecture with fresh
            parameters. Default: the environment variable ``NNABLA_MODELS_PRETRAINED``
            (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import ShuffleNet10
        >>> nn.clear_parameters()
        >>> ShuffleNet10(pretrained=False)(use_up_to='lastconv').shape
        (1, 960, 7, 7)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "Add2_3_RepeatStart_3[2]",
        "lastconv+relu": "ReLU_8_RepeatStart_3[2]",
    }

    def __init__(self, scaling_factor=10, pretrained=None):
        if scaling_factor not in _CHANNELS:
            raise ValueError(f"ShuffleNet: scaling_factor must be chosen from "
                             f"{set(_CHANNELS)}; given {scaling_factor}")
        self.scaling_factor = scaling_factor
        # nnabla 1.39 stores the 0.5x file as 'ShuffleNet-.05x.nnp'; so do we, to share it
        rel_name = "ShuffleNet-.05x.nnp" if scaling_factor == 5 else None
        self._load_nnp(_STEM[scaling_factor], pretrained, rel_name)

    def _architecture(self, b, x):
        b.reserved.update(("Add2_3", "ReLU_8", "AveragePooling"))
        stem, *stages = _CHANNELS[self.scaling_factor]
        h = b.conv(b.auto("Convolution"), x, stem, (3, 3), (1, 1), (2, 2))
        h = b.relu(b.auto("ReLU"), b.bn(b.auto("BatchNormalization"), h))
        h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2), True, (1, 1))
        for stage, (maps, n_units) in enumerate(zip(stages, _UNITS)):
            h = _unit(b, h, maps, 2, first_grouped=stage > 0)
            mark = b.mark()
            for i in range(n_units - 1):
                b.rewind(mark)
                rep = ("RepeatStart" if stage == 0 else f"RepeatStart_{stage + 1}", i)
                names = ("Add2_3", "ReLU_8") if stage == 2 else (None, None)
                h = _unit(b, h, maps, 1, True, rep, names)
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        return b.affine("Affine", h, 1000)


def _unit(b, x, maps, stride, first_grouped, rep=None, names=(None, None)):
    """A ShuffleNet unit of ``maps`` output channels; ``names``: those of its addition
    and final ReLU when a key names them."""
    branch_maps = maps if stride == 1 else maps - x.shape[1]
    mid = maps // 4

    def conv_bn(h, out, group):
        h = b.conv(b.auto("Convolution"), h, out, (1, 1), group=group, rep=rep)
        return b.bn(b.auto("BatchNormalization"), h, rep=rep)

    h = conv_bn(x, mid, _GROUPS if first_grouped else 1)
    h = b.relu(b.auto("ReLU"), h, rep=rep)
    h = b.channel_shuffle(b.auto("Shuffle"), h, _GROUPS, rep=rep)
    h = b.depthwise(b.auto("DepthwiseConvolution"), h, (3, 3), (1, 1), (stride, stride),
                    rep=rep)
    h = b.bn(b.auto("BatchNormalization"), h, rep=rep)
    h = conv_bn(h, branch_maps, _GROUPS)
    if stride == 1:
        h = b.add2(names[0] or b.auto("Add2"), x, h, rep=rep)
    else:
        pool = b.avg_pool(b.auto("AveragePooling"), x, (3, 3), (2, 2), True, (1, 1),
                          rep=rep)
        h = b.concat(b.auto("Concatenate"), (pool, h), rep=rep)
    return b.relu(names[1] or b.auto("ReLU"), h, rep=rep)


class ShuffleNet10(ShuffleNet):
    """ShuffleNet10: :class:`ShuffleNet` ``(10)``."""

    def __init__(self, pretrained=None):
        super().__init__(10, pretrained)


class ShuffleNet05(ShuffleNet):
    """ShuffleNet05: :class:`ShuffleNet` ``(5)``."""

    def __init__(self, pretrained=None):
        super().__init__(5, pretrained)


class ShuffleNet20(ShuffleNet):
    """ShuffleNet20: :class:`ShuffleNet` ``(20)``."""

    def __init__(self, pretrained=None):
        super().__init__(20, pretrained)
