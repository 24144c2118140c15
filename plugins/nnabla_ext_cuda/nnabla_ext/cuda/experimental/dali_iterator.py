"""NVIDIA DALI pipelines as nnabla data iterators (nnabla-ext-cuda's
``nnabla_ext.cuda.experimental.dali_iterator``).

Importing this module never fails: ``enabled`` tells whether DALI (the ``nvidia.dali``
package, ``pip install nvidia-dali-cuda130`` for CUDA 13) could be imported. Without it,
one message is logged and :class:`DaliIterator`, :class:`DataIteratorPipeline`,
:func:`create_dali_iterator_from_data_iterator` and :func:`feed_ndarray` raise
``ImportError`` naming the package, so tests can skip on ``not dali_iterator.enabled`` as
nnabla's own do.

Example:
    >>> from nnabla_ext.cuda.experimental import dali_iterator
    >>> isinstance(dali_iterator.enabled, bool)
    True
"""
from __future__ import annotations

from nnabla.logger import logger

PACKAGE = "nvidia-dali-cuda130"
_NAMES = ("DaliIterator", "DataIteratorPipeline", "create_dali_iterator_from_data_iterator",
          "feed_ndarray")
__all__ = ["enabled", "PACKAGE", *_NAMES]

try:
    import nvidia.dali  # noqa: F401
except ImportError as error:
    enabled = False
    _reason = f"{type(error).__name__}: {error}"
    logger.warning("nnabla_ext.cuda.experimental.dali_iterator: NVIDIA DALI is not installed "
                   f"({_reason}); its helpers are unavailable (pip install {PACKAGE})")
else:
    enabled = True
    _reason = ""
    from ._dali_iterator import (DaliIterator, DataIteratorPipeline,  # noqa: F401
                                 create_dali_iterator_from_data_iterator, feed_ndarray)


def __getattr__(name):
    if name in _NAMES:
        raise ImportError(f"nnabla_ext.cuda.experimental.dali_iterator.{name} needs NVIDIA "
                          f"DALI (the nvidia.dali package), which could not be imported "
                          f"({_reason}); install it with `pip install {PACKAGE}`",
                          name=__name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
