"""Inception-v3 (``nnabla.models.imagenet.InceptionV3``)."""
from __future__ import annotations

from ._aux import AuxTowerModel


class InceptionV3(AuxTowerModel):
    """Inception-v3 (Szegedy et al., Rethinking the Inception Architecture for Computer
    Vision, https://arxiv.org/abs/1512.00567) on 299x299 inputs, as the reference
    implementations (TensorFlow-slim, torchvision) define it: five stem convolutions, three
    35x35 modules, a grid reduction, four 17x17 modules with factorized 7x7 convolutions,
    a grid reduction, two 8x8 modules with expanded filter banks, global average pooling,
    dropout and the classifier; one auxiliary classifier on the last 17x17 module for
    training (with ``with_aux_tower=True``, its 768 features before the affine layer, as
    nnabla 1.39 gives them from the published file). Each convolution is a unit
    (convolution without bias, batch normalization, ReLU) named ``Conv_<n>``; each module a
    unit ``Inception_<n>``.

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'prepool'``: the input of that pooling, the last module's output.

    Args:
        pretrained (bool, optional): load nnabla's published parameters
            (``Inception-v3.nnp``), downloading them when missing; False builds the same
            architecture with fresh parameters. Default: the environment variable
            ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import InceptionV3
        >>> nn.clear_parameters()
        >>> InceptionV3(pretrained=False)(use_up_to='prepool').shape
        (1, 2048, 8, 8)
    """

    _KEY_VARIABLE = {
        "classifier": "Affine",
        "pool": "AveragePooling_2",
        "prepool": "Inception_11/Concatenate",
        "_aux_classifier": "Affine_2",
        "_include_no_aux": "Conv_6/Convolution",
    }
    _AUX_KEYS = ("_aux_classifier",)
    _BRANCH_KEYS = ("_include_no_aux",)
    _AUX_DROP = (("Affine_2", "SoftmaxCrossEntropy_2", "MulScalar_2"),)
    _BRANCH_DROP = (("Conv_6/Convolution", "Conv_6/BatchNormalization", "Conv_6/ReLU",
                     "AveragePooling", "Conv_7/Convolution", "Conv_7/BatchNormalization",
                     "Conv_7/ReLU", "Affine_2", "SoftmaxCrossEntropy_2", "MulScalar_2"),)
    _nnp_input = "Iv3TrainInput"
    _augmentation = "ImageAugmentation"
    _pool_name = "AveragePooling_2"
    _dropouts = ("Dropout",)
    _published = "Inception-v3"
    _input_size = (3, 299, 299)

    def _architecture(self, b, x):
        h = x
        for name, maps, kernel, pad, stride in (("Conv", 32, 3, 0, 2), ("Conv_2", 32, 3, 0, 1),
                                                ("Conv_3", 64, 3, 1, 1)):
            h = _conv(b, h, maps, (kernel, kernel), (pad, pad), stride, name)
        h = b.max_pool("MaxPooling", h, (3, 3), (2, 2))
        h = _conv(b, h, 80, (1, 1), name="Conv_4")
        h = _conv(b, h, 192, (3, 3), name="Conv_5")
        h = b.max_pool("MaxPooling_2", h, (3, 3), (2, 2))
        modules = ((_module_a, 32), (_module_a, 64), (_module_a, 64), (_module_b,),
                   (_module_c, 128), (_module_c, 160), (_module_c, 160), (_module_c, 192),
                   "aux", (_module_d,), (_module_e,), (_module_e,))
        number = 0
        for module in modules:
            if module == "aux":
                if self._builds_aux_tower(b):
                    _aux_tower(b, h)
                continue
            number += 1
            with b.unit("Inception" if number == 1 else f"Inception_{number}"):
                h = module[0](b, h, *module[1:])
        h = b.avg_pool("AveragePooling_2", h, (8, 8), (8, 8), False)
        h = b.dropout("Dropout", h, 0.2)
        return b.affine("Affine", h, 1000)


def _conv(b, x, maps, kernel, pad=(0, 0), stride=1, name=None):
    """A ``Conv`` unit: convolution without bias, batch normalization, ReLU."""
    with b.unit(name or b.auto("Conv")):
        h = b.conv("Convolution", x, maps, kernel, pad, (stride, stride))
        return b.relu("ReLU", b.bn("BatchNormalization", h))


def _avg_branch(b, x, maps):
    h = b.avg_pool(b.auto("AveragePooling"), x, (3, 3), (1, 1), True, (1, 1))
    return _conv(b, h, maps, (1, 1))


def _module_a(b, x, pool_maps):
    """35x35: 1x1; 1x1-5x5; 1x1-3x3-3x3; average pooling-1x1."""
    b5 = _conv(b, _conv(b, x, 48, (1, 1)), 64, (5, 5), (2, 2))
    b3 = _conv(b, _conv(b, x, 64, (1, 1)), 96, (3, 3), (1, 1))
    b3 = _conv(b, b3, 96, (3, 3), (1, 1))
    return b.concat("Concatenate", (_conv(b, x, 64, (1, 1)), b5, b3,
                                    _avg_branch(b, x, pool_maps)))


def _module_b(b, x):
    """35x35 to 17x17: strided 3x3; 1x1-3x3-strided 3x3; max pooling."""
    b3 = _conv(b, x, 384, (3, 3), stride=2)
    d3 = _conv(b, _conv(b, x, 64, (1, 1)), 96, (3, 3), (1, 1))
    d3 = _conv(b, d3, 96, (3, 3), stride=2)
    pool = b.max_pool(b.auto("MaxPooling"), x, (3, 3), (2, 2))
    return b.concat("Concatenate", (b3, d3, pool))


def _module_c(b, x, c7):
    """17x17: 1x1; 1x1-1x7-7x1; 1x1-7x1-1x7-7x1-1x7; average pooling-1x1."""
    row, col = ((1, 7), (0, 3)), ((7, 1), (3, 0))
    b7 = _conv(b, x, c7, (1, 1))
    for (kernel, pad), maps in ((row, c7), (col, 192)):
        b7 = _conv(b, b7, maps, kernel, pad)
    d7 = _conv(b, x, c7, (1, 1))
    for (kernel, pad), maps in ((col, c7), (row, c7), (col, c7), (row, 192)):
        d7 = _conv(b, d7, maps, kernel, pad)
    return b.concat("Concatenate", (_conv(b, x, 192, (1, 1)), b7, d7,
                                    _avg_branch(b, x, 192)))


def _module_d(b, x):
    """17x17 to 8x8: 1x1-strided 3x3; 1x1-1x7-7x1-strided 3x3; max pooling."""
    b3 = _conv(b, _conv(b, x, 192, (1, 1)), 320, (3, 3), stride=2)
    b7 = _conv(b, x, 192, (1, 1))
    b7 = _conv(b, b7, 192, (1, 7), (0, 3))
    b7 = _conv(b, b7, 192, (7, 1), (3, 0))
    b7 = _conv(b, b7, 192, (3, 3), stride=2)
    pool = b.max_pool(b.auto("MaxPooling"), x, (3, 3), (2, 2))
    return b.concat("Concatenate", (b3, b7, pool))


def _module_e(b, x):
    """8x8: 1x1; 1x1-(1x3, 3x1); 1x1-3x3-(1x3, 3x1); average pooling-1x1."""
    def split(h, name):
        return b.concat(name, (_conv(b, h, 384, (1, 3), (0, 1)),
                               _conv(b, h, 384, (3, 1), (1, 0))))

    b3 = split(_conv(b, x, 384, (1, 1)), "Concatenate_2")
    d3 = _conv(b, _conv(b, x, 448, (1, 1)), 384, (3, 3), (1, 1))
    d3 = split(d3, "Concatenate_3")
    return b.concat("Concatenate", (_conv(b, x, 320, (1, 1)), b3, d3,
                                    _avg_branch(b, x, 192)))


def _aux_tower(b, x):
    """The auxiliary classifier. As nnabla 1.39 drops its affine layer with the loss,
    ``with_aux_tower`` gives the 768 features before it; the layer is built only for its
    own key (``_aux_classifier``)."""
    h = b.avg_pool("AveragePooling", x, (5, 5), (3, 3), True)
    h = _conv(b, h, 128, (1, 1), name="Conv_6")
    h = _conv(b, h, 768, (5, 5), name="Conv_7")
    if b.stop_at == "Affine_2":
        b.affine("Affine_2", h, 1000)
    b.aux_outputs.append(h)
