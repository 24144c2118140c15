"""``nnabla.experimental.parametric_function_classes``: nnabla ships this module empty; the
classes are in :mod:`nnabla.experimental.parametric_function_class`, re-exported here."""
from .parametric_function_class import (  # noqa: F401
    Affine, BatchNorm1d, BatchNorm2d, BatchNorm3d, BatchNormalization, Conv1d, Conv2d, Conv3d,
    Convolution, ConvNd, Deconv1d, Deconv2d, Deconv3d, Deconvolution, DeconvNd, Embed, Linear,
    Module)
