"""ResNet-18/34/50/101/152 (``nnabla.models.imagenet.ResNet`` and aliases)."""
from __future__ import annotations

from .base import ImageNetBase

_BLOCKS = {18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3),
           152: (3, 8, 36, 3)}
# The published files' names of the residual additions and the ReLUs after them: stage s
# has (first block, repeated blocks); the last stage's pair is the 'lastconv' keys' one.
_ADD = (("Add2", "Add2_2"), ("Add2_3", "Add2_4"), ("Add2_5", "Add2_6"), ("Add2_8", "Add2_7"))
_RELU_OUT = (("ReLU_4", "ReLU_7"), ("ReLU_10", "ReLU_13"), ("ReLU_16", "ReLU_19"),
             ("ReLU_22", "ReLU_25"))
_REPEAT = ("RepeatStart", "RepeatStart_2", "RepeatStart_3", "RepeatStart_4")


class ResNet(ImageNetBase):
    """ResNet with 18, 34, 50, 101 or 152 layers (He et al., Deep Residual Learning for
    Image Recognition, https://arxiv.org/abs/1512.03385).

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'lastconv'``: the input of that pooling, before ReLU.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    Args:
        num_layers (int): 18, 34, 50, 101 or 152.
        pretrained (bool, optional): load nnabla's published parameters (downloading
            them when missing); False builds the same architecture with fresh
            parameters. Default: the environment variable ``NNABLA_MODELS_PRETRAINED``
            (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import ResNet18
        >>> nn.clear_parameters()
        >>> model = ResNet18(pretrained=False)
        >>> y = model(nn.Variable((1, 3, 224, 224)), use_up_to='pool')
        >>> y.shape
        (1, 512, 1, 1)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "Add2_7_RepeatStart_4[{index}]",
        "lastconv+relu": "ReLU_25_RepeatStart_4[{index}]",
    }

    _cardinality = 1   # groups of the bottleneck's 3x3 convolution
    _width = 1         # its channels, as a multiple of the stage's base (64, 128, ...)

    def __init__(self, num_layers=18, pretrained=None):
        if num_layers not in _BLOCKS:
            raise ValueError(f"ResNet: num_layers must be chosen from {set(_BLOCKS)}; given "
                             f"{num_layers}")
        self.num_layers = num_layers
        self._load_nnp(f"Resnet-{num_layers}", pretrained)


    def _format_dict(self):
        return {"index": 0 if self.num_layers == 18 else 1}

    # -- architecture (pretrained=False) --------------------------------------------
    def _architecture(self, b, x):
        h = b.conv("Convolution", x, 64, (7, 7), (3, 3), (2, 2))
        h = b.relu("ReLU", b.bn("BatchNormalization", h))
        h = b.max_pool("MaxPooling", h, (3, 3), (2, 2), True, (1, 1))
        for stage, n_blocks in enumerate(_BLOCKS[self.num_layers]):
            maps = 64 * 2 ** stage
            stride = (1, 1) if stage == 0 else (2, 2)
            h = self._block(b, h, stage, maps, stride, None)
            for i in range(n_blocks - 1):   # every copy of a repeat has the same names
                h = self._block(b, h, stage, maps, (1, 1), (_REPEAT[stage], i))
        h = b.avg_pool("AveragePooling", h, (7, 7), (7, 7), False)
        return b.affine("Affine", h, 1000)

    def _layer_names(self, stage, rep, has_shortcut):
        """Layer numbers of one block: (shortcut, convolutions, middle ReLUs).

        The bottleneck networks number their layers in graph order, a stage taking seven
        convolutions (shortcut, three, and the repeat block's three) and six ReLUs; that
        order gives the published keys' ReLU_4, ReLU_7, ..., ReLU_25. The basic blocks
        (18, 34) follow Neural Network Console's ResNet-18, which keeps those numbers
        with one convolution and one ReLU per block left out."""
        s = stage + 1
        if self.num_layers < 50:
            if rep is None:
                return 7 * s - 5, (7 * s - 4, 7 * s - 3), (6 * s - 4,)
            return None, (7 * s - 1, 7 * s), (6 * s - 1,)
        return bottleneck_numbers(stage, rep)

    def _block(self, b, x, stage, maps, stride, rep):
        bottleneck = self.num_layers >= 50
        out_maps = maps * 4 if bottleneck else maps
        has_shortcut = x.shape[1] != out_maps or stride != (1, 1)
        short_n, conv_ns, relu_ns = self._layer_names(stage, rep, has_shortcut)
        shortcut = x
        if has_shortcut:
            shortcut = b.conv(_name("Convolution", short_n), x, out_maps, (1, 1), (0, 0),
                              stride, rep=rep)
            shortcut = b.bn(_name("BatchNormalization", short_n), shortcut, rep=rep)
        mid = maps * self._width
        if bottleneck:
            layers = (((1, 1), (0, 0), (1, 1), mid, 1),
                      ((3, 3), (1, 1), stride, mid, self._cardinality),
                      ((1, 1), (0, 0), (1, 1), out_maps, 1))
        else:
            layers = (((3, 3), (1, 1), stride, maps, 1), ((3, 3), (1, 1), (1, 1), maps, 1))
        h = x
        for j, ((kernel, pad, s, m, group), n) in enumerate(zip(layers, conv_ns)):
            h = b.conv(_name("Convolution", n), h, m, kernel, pad, s, group=group, rep=rep)
            h = b.bn(_name("BatchNormalization", n), h, rep=rep)
            if j < len(layers) - 1:
                h = b.relu(_name("ReLU", relu_ns[j]), h, rep=rep)
        which = 0 if rep is None else 1
        h = b.add2(_ADD[stage][which], shortcut, h, rep=rep)
        return b.relu(_RELU_OUT[stage][which], h, rep=rep)


def _name(kind, number):
    return kind if number == 1 else f"{kind}_{number}"


def bottleneck_numbers(stage, rep):
    """(shortcut, convolutions, middle ReLUs) numbers of a bottleneck block of ``stage``
    (0-based), the first (``rep`` None) or the repeat block's (see ResNet._layer_names)."""
    s = stage + 1
    if rep is None:
        return 7 * s - 5, (7 * s - 4, 7 * s - 3, 7 * s - 2), (6 * s - 4, 6 * s - 3)
    return None, (7 * s - 1, 7 * s, 7 * s + 1), (6 * s - 1, 6 * s)


class ResNet18(ResNet):
    """ResNet18: :class:`ResNet` ``(18)``."""

    def __init__(self, pretrained=None):
        super().__init__(18, pretrained)


class ResNet34(ResNet):
    """ResNet34: :class:`ResNet` ``(34)``."""

    def __init__(self, pretrained=None):
        super().__init__(34, pretrained)


class ResNet50(ResNet):
    """ResNet50: :class:`ResNet` ``(50)``."""

    def __init__(self, pretrained=None):
        super().__init__(50, pretrained)


class ResNet101(ResNet):
    """ResNet101: :class:`ResNet` ``(101)``."""

    def __init__(self, pretrained=None):
        super().__init__(101, pretrained)


class ResNet152(ResNet):
    """ResNet152: :class:`ResNet` ``(152)``."""

    def __init__(self, pretrained=None):
        super().__init__(152, pretrained)
