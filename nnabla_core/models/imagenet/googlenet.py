"""GoogLeNet (``nnabla.models.imagenet``)."""
from __future__ import annotations

from ._aux import AuxTowerModel

# Inception modules: (1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection); "pool" is
# a 3x3 max pooling of stride 2, "aux" an auxiliary classifier's branching point.
_MODULES = ((64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), "pool",
            (192, 96, 208, 16, 48, 64), "aux", (160, 112, 224, 24, 64, 64),
            (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64), "aux",
            (256, 160, 320, 32, 128, 128), "pool", (256, 160, 320, 32, 128, 128),
            (384, 192, 384, 48, 128, 128))


class GoogLeNet(AuxTowerModel):
    """GoogLeNet (Szegedy et al., Going Deeper with Convolutions,
    https://arxiv.org/abs/1409.4842): nine inception modules, convolutions with biases
    and ReLU, no local response normalization, and two auxiliary classifiers used in
    training (average pooling 5x5/3, 1x1 convolution to 128 channels, affine 1024,
    dropout 0.7, affine 1000); with ``with_aux_tower=True`` the towers' outputs are, as
    nnabla 1.39 gives them from the published file, their 1024 features before the last
    affine layer (dropped there with the losses).

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the final global average pooling's output.
    * ``'prepool'``: the input of that pooling, the last inception module's output.

    Args:
        pretrained (bool, optional): load nnabla's published parameters
            (``GoogLeNet.nnp``), downloading them when missing; False builds the same
            architecture with fresh parameters. Default: the environment variable
            ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import GoogLeNet
        >>> nn.clear_parameters()
        >>> GoogLeNet(pretrained=False)(use_up_to='prepool').shape
        (1, 1024, 7, 7)
        >>> aux1, aux2, y = GoogLeNet(pretrained=False)(training=True, with_aux_tower=True)
        >>> aux1.shape, y.shape
        ((1, 1024), (1, 1000))
    """

    _KEY_VARIABLE = {
        "classifier": "Affine_5",
        "pool": "AveragePooling_3",
        "prepool": "Concatenate_9",
        "_aux_classifier_1": "Affine_2",
        "_branching_point_1": "AveragePooling",
        "_aux_classifier_2": "Affine_4",
        "_branching_point_2": "AveragePooling_2",
    }
    _AUX_KEYS = ("_aux_classifier_1", "_aux_classifier_2")
    _BRANCH_KEYS = ("_branching_point_1", "_branching_point_2")
    _AUX_DROP = (("Affine_2", "SoftmaxCrossEntropy", "MulScalarLoss1"),
                 ("Affine_4", "SoftmaxCrossEntropy_2", "MulScalarLoss2"))
    _BRANCH_DROP = (("AveragePooling", "Convolution_22", "ReLU_22", "Affine", "ReLU_23",
                     "Dropout", "Affine_2", "SoftmaxCrossEntropy", "MulScalarLoss1"),
                    ("AveragePooling_2", "Convolution_41", "ReLU_42", "Affine_3", "ReLU_43",
                     "Dropout_2", "Affine_4", "SoftmaxCrossEntropy_2", "MulScalarLoss2"))
    _pool_name = "AveragePooling_3"
    _dropouts = ("Dropout_3",)
    _published = "GoogLeNet"

    def _architecture(self, b, x):
        h = _conv(b, x, 64, 7, stride=2)
        h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2), True, (1, 1))
        h = _conv(b, _conv(b, h, 64, 1), 192, 3)
        h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2), True, (1, 1))
        build_aux = self._builds_aux_tower(b)
        for module in _MODULES:
            if module == "pool":
                h = b.max_pool(b.auto("MaxPooling"), h, (3, 3), (2, 2), True, (1, 1))
            elif module == "aux":
                _aux_tower(b, h, build_aux)
            else:
                h = _inception(b, h, *module)
        h = b.avg_pool("AveragePooling_3", h, (7, 7), (7, 7), False)
        h = b.dropout("Dropout_3", h, 0.4)
        return b.affine("Affine_5", h, 1000)


def _conv(b, x, maps, kernel, stride=1):
    """Convolution (with bias, 'same' padding) and ReLU."""
    h = b.conv(b.auto("Convolution"), x, maps, (kernel, kernel), (kernel // 2,) * 2,
               (stride, stride), with_bias=True)
    return b.relu(b.auto("ReLU"), h)


def _inception(b, x, n1, r3, n3, r5, n5, proj):
    branches = (_conv(b, x, n1, 1), _conv(b, _conv(b, x, r3, 1), n3, 3),
                _conv(b, _conv(b, x, r5, 1), n5, 5))
    pool = b.max_pool(b.auto("MaxPooling"), x, (3, 3), (1, 1), True, (1, 1))
    return b.concat(b.auto("Concatenate"), branches + (_conv(b, pool, proj, 1),))


def _aux_tower(b, x, build):
    """An auxiliary classifier; its layers are numbered even when it is not built, as in
    the published file (where the tower is dropped). As nnabla 1.39 drops the tower's
    last affine layer with its loss, ``with_aux_tower`` gives the features before it; the
    layer is built only for its own key (``_aux_classifier_<n>``)."""
    names = [b.auto(kind) for kind in ("AveragePooling", "Convolution", "ReLU", "Affine",
                                       "ReLU", "Dropout", "Affine")]
    if not build:
        return
    h = b.avg_pool(names[0], x, (5, 5), (3, 3), True)
    h = b.relu(names[2], b.conv(names[1], h, 128, (1, 1), with_bias=True))
    h = b.relu(names[4], b.affine(names[3], h, 1024))
    h = b.dropout(names[5], h, 0.7)
    if b.stop_at == names[6]:
        b.affine(names[6], h, 1000)
    b.aux_outputs.append(h)
