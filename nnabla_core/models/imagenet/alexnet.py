"""AlexNet (``nnabla.models.imagenet``)."""
from __future__ import annotations

from .base import ImageNetBase

# (channels, kernel, stride, pad, followed by a max pooling) of the five convolutions
_CONVS = ((96, 11, 4, 0, True), (256, 5, 1, 2, True), (384, 3, 1, 1, False),
          (384, 3, 1, 1, False), (256, 3, 1, 1, True))


def _n(kind, number):
    return kind if number == 1 else f"{kind}_{number}"


class AlexNet(ImageNetBase):
    """AlexNet (Krizhevsky et al., ImageNet Classification with Deep Convolutional Neural
    Networks, NIPS 2012), in its single-tower form (no grouped convolutions, no local
    response normalization) on 227x227 inputs.

    Keys of ``use_up_to``:

    * ``'classifier'`` (default): the final affine layer's output.
    * ``'pool'``: the last max pooling's output ``(batch, 256, 6, 6)``.
    * ``'lastconv'``: the fifth convolution's output, before ReLU.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.
    * ``'lastfeature'``: the second affine layer's output (4096 features, before ReLU).

    Args:
        pretrained (bool, optional): load nnabla's published parameters (``AlexNet.nnp``),
            downloading them when missing; False builds the same architecture with fresh
            parameters. Default: the environment variable ``NNABLA_MODELS_PRETRAINED``
            (``0`` means False), else True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.imagenet import AlexNet
        >>> nn.clear_parameters()
        >>> AlexNet(pretrained=False)(use_up_to='pool').shape
        (1, 256, 6, 6)
    """

    _KEY_VARIABLE = {
        "classifier": "TrainNet/Affine_3",
        "pool": "TrainNet/MaxPooling_3",
        "lastconv": "TrainNet/Convolution_5",
        "lastconv+relu": "TrainNet/ReLU_5",
        "lastfeature": "TrainNet/Affine_2",
    }
    _nnp_input = "TrainingInput"
    _augmentation = "ImageAugmentationX"
    _pool_name = None
    _dropouts = ("TrainNet/Dropout", "TrainNet/Dropout_2")

    _published = "AlexNet"
    _input_size = (3, 227, 227)

    def __call__(self, input_var=None, use_from=None, use_up_to="classifier", training=False,
                 force_global_pooling=False, check_global_pooling=True, returns_net=False,
                 verbose=0, with_aux_tower=False):
        """Create the network, as :meth:`ImageNetBase.__call__`.

        Args:
            with_aux_tower (bool): in nnabla 1.39's signature of this class; AlexNet has
                no auxiliary tower, so it changes nothing.
        """
        return super().__call__(input_var, use_from, use_up_to, training,
                                force_global_pooling, check_global_pooling, returns_net,
                                verbose)

    def _architecture(self, b, x):
        b.prefix = b.scope_prefix = "TrainNet/"
        h, pools = x, 0
        for number, (maps, kernel, stride, pad, pool) in enumerate(_CONVS, 1):
            h = b.conv(_n("Convolution", number), h, maps, (kernel, kernel), (pad, pad),
                       (stride, stride), with_bias=True)
            h = b.relu(_n("ReLU", number), h)
            if pool:
                pools += 1
                h = b.max_pool(_n("MaxPooling", pools), h, (3, 3), (2, 2))
        for number in (1, 2):
            h = b.affine(_n("Affine", number), h, 4096)
            h = b.relu(f"ReLU_{5 + number}", h)
            h = b.dropout(_n("Dropout", number), h, 0.5)
        return b.affine("Affine_3", h, 1000)
