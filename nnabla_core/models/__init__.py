"""Pretrained models (``nnabla.models``), with nnabla 1.39's classes and ``__call__``
arguments (``use_up_to``, ``training``, ``returns_net``, ...):

- :mod:`nnabla.models.imagenet`: ResNet18/34/50/101/152, MobileNet, MobileNetV2, SENet,
  SqueezeNet, VGG, NIN, DenseNet, InceptionV3, Xception, GoogLeNet, ResNeXt, ShuffleNet,
  AlexNet;
- :mod:`nnabla.models.object_detection`: YoloV2;
- :mod:`nnabla.models.semantic_segmentation`: DeepLabV3plus.

They load nnabla's published ``.nnp`` files from nnabla's data home
(``~/nnabla_data/nnp_models/...``), downloading them when online (from the Zenodo record
nnabla's maintainers publish them in, or from ``NNABLA_MODELS_URL_BASE`` with nnabla 1.39's
layout when set); offline with no file, the error names the URL and where to put the file.
With ``pretrained=False``, or the environment variable ``NNABLA_MODELS_PRETRAINED=0`` for
unchanged scripts, they build the same architecture (same variable names and ``use_up_to``
keys) with freshly initialised parameters and no download, so graph tools work offline.
"""
