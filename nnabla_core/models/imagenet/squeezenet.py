"""SqueezeNet v1.0 and v1.1 (``nnabla.models.imagenet.SqueezeNet`` and aliases)."""
from __future__ import annotations

from .base import ImageNetBase

# Fire modules: (squeeze channels, channels of each expand branch); "pool" is a 3x3
# max pooling of stride 2.
_FIRES = {
    "v1.0": ((16, 64), (16, 64), (32, 128), "pool", (32, 128), (48, 192), (48, 192),
             (64, 256), "pool", (64, 256)),
    "v1.1": ((16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool", (48, 192),
             (48, 192), (64, 256), (64, 256)),
}
# The first convolution: (channels, kernel)
_STEM = {"v1.0": (96, 7), "v1.1": (64, 3)}


class SqueezeNet(ImageNetBase):
    """SqueezeNet v1.0 or v1.1 (Iandola et al., SqueezeNet: AlexNet-level accuracy with
    50x fewer parameters and <0.5MB model size, https://arxiv.org/abs/1602.07360).

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final global average pooling reshaped to
      ``(batch, 1000)``.
    * ``'pool'``: the final global average pooling's output.
    * ``'lastconv'``: the input of that pooling (the 1000-channel convolution), before ReLU.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    The v1.1 file's variables are in the unit ``SqueezeNet/``.

    Args:
        version (str): ``'v1.0'`` or ``'v1.1'``.
        pretrained (bool, optional): load nnabla's published parameters
            (``SqueezeNet-1.0.nnp``, ``SqueezeNet-1.1.nnp``), downloading them when missing;
            False builds the same architecture with fresh parameters. Default: the
            environment variable ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import SqueezeNetV11
        >>> nn.clear_parameters()
        >>> SqueezeNetV11(pretrained=False)(use_up_to='lastconv').shape
        (1, 1000, 13, 13)
    """

    _KEY_VARIABLE = {
        "classifier": "{prefix}Reshape",
        "pool": "{prefix}AveragePooling",
        "lastconv": "{prefix}Convolution_2",
        "lastconv+relu": "{prefix}ReLU_2",
    }
    _nnp_input = "TrainingInput"
    _pool_name = "{prefix}AveragePooling"
    _dropouts = ("{prefix}Dropout",)
    _input_size = (3, 227, 227)

    def __init__(self, version="v1.1", pretrained=None):
        if version not in _FIRES:
            raise ValueError(f"SqueezeNet: version must be chosen from {set(_FIRES)}; given "
                             f"{version!r}")
        self.version = version
        self._prefix = "SqueezeNet/" if version == "v1.1" else ""
        self._load_nnp(f"SqueezeNet-{version[1:]}", pretrained)

    def _format_dict(self):
        return {"prefix": self._prefix}

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = self._prefix
        maps, kernel = _STEM[self.version]
        h = b.conv("Convolution", x, maps, (kernel, kernel), (0, 0), (2, 2), with_bias=True)
        h = b.relu("ReLU", h)
        h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2))
        for fire in _FIRES[self.version]:
            if fire == "pool":
                h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2))
            else:
                with b.unit(b.auto("FireModule")):
                    h = _fire(b, h, *fire)
        h = b.dropout("Dropout", h, 0.5)
        h = b.conv("Convolution_2", h, 1000, (1, 1), with_bias=True)
        h = b.relu("ReLU_2", h)
        h = b.avg_pool("AveragePooling", h, (13, 13), (13, 13), False)
        return b.reshape("Reshape", h, (h.shape[0], 1000))


def _fire(b, x, squeeze, expand):
    """A fire module: 1x1 squeeze, then 1x1 and 3x3 expansions, concatenated."""
    s = b.relu("ReLU", b.conv("Convolution", x, squeeze, (1, 1), with_bias=True))
    e1 = b.relu("ReLU_2", b.conv("Convolution_2", s, expand, (1, 1), with_bias=True))
    e3 = b.relu("ReLU_3", b.conv("Convolution_3", s, expand, (3, 3), (1, 1),
                                 with_bias=True))
    return b.concat("Concatenate", (e1, e3))


class SqueezeNetV10(SqueezeNet):
    """SqueezeNetV10: :class:`SqueezeNet` ``('v1.0')``."""

    def __init__(self, pretrained=None):
        super().__init__("v1.0", pretrained)


class SqueezeNetV11(SqueezeNet):
    """SqueezeNetV11: :class:`SqueezeNet` ``('v1.1')``."""

    def __init__(self, pretrained=None):
        super().__init__("v1.1", pretrained)
