"""ResNeXt-50/101 (``nnabla.models.imagenet.ResNeXt`` and aliases)."""
from __future__ import annotations

from .resnet import ResNet

_NUM_LAYERS = (50, 101)


class ResNeXt(ResNet):
    """ResNeXt with 50 or 101 layers, cardinality 32 and bottleneck width 4 (32x4d) (Xie
    et al., Aggregated Residual Transformations for Deep Neural Networks,
    https://arxiv.org/abs/1611.05431).

    The network is ResNet-50/101's (the same layer names) with a grouped 3x3 convolution
    of twice the channels in each bottleneck.

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'lastconv'``: the input of that pooling, before ReLU.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    Args:
        num_layers (int): 50 or 101.
        pretrained (bool, optional): load nnabla's published parameters
            (``ResNeXt-50.nnp``, ``ResNeXt-101.nnp``), downloading them when missing;
            False builds the same architecture with fresh parameters. Default: the
            environment variable ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import ResNeXt50
        >>> nn.clear_parameters()
        >>> ResNeXt50(pretrained=False)(use_up_to='lastconv').shape
        (1, 2048, 7, 7)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling",
        "lastconv": "Add2_7_RepeatStart_4[1]",
        "lastconv+relu": "ReLU_25_RepeatStart_4[1]",
    }
    _cardinality = 32
    _width = 2

    def __init__(self, num_layers=50, pretrained=None):
        if num_layers not in _NUM_LAYERS:
            raise ValueError(f"ResNeXt: num_layers must be chosen from {set(_NUM_LAYERS)}; "
                             f"given {num_layers}")
        self.num_layers = num_layers
        self._load_nnp(f"ResNeXt-{num_layers}", pretrained)

    def _format_dict(self):
        return {}


class ResNeXt50(ResNeXt):
    """ResNeXt50: :class:`ResNeXt` ``(50)``."""

    def __init__(self, pretrained=None):
        super().__init__(50, pretrained)


class ResNeXt101(ResNeXt):
    """ResNeXt101: :class:`ResNeXt` ``(101)``."""

    def __init__(self, pretrained=None):
        super().__init__(101, pretrained)
