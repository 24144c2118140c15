"""Class-style parametric functions (``nnabla.experimental.parametric_function_class``):
layers that hold their parameters as attributes instead of in the global parameter scope.
The classes live in the submodules ``affine``, ``convolution``, ``deconvolution``,
``batch_normalization``, ``embed`` and ``module`` (as in nnabla) and are also importable
from here."""
from .affine import Affine, Linear  # noqa: F401
from .batch_normalization import (  # noqa: F401
    BatchNorm1d, BatchNorm2d, BatchNorm3d, BatchNormalization)
from .convolution import Conv1d, Conv2d, Conv3d, Convolution, ConvNd  # noqa: F401
from .deconvolution import Deconv1d, Deconv2d, Deconv3d, Deconvolution, DeconvNd  # noqa: F401
from .embed import Embed  # noqa: F401
from .module import Module  # noqa: F401
