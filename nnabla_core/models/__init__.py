"""Pretrained models (``nnabla.models``): ImageNet classifiers in
:mod:`nnabla.models.imagenet`, built from nnabla's published ``.nnp`` files (downloaded into
``~/nnabla_data/nnp_models``) or, with ``pretrained=False`` or the environment variable
``NNABLA_MODELS_PRETRAINED=0``, with the same architecture and freshly initialised
parameters (no download)."""
