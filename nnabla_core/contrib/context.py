"""``nnabla.contrib.context``: the deprecated ``extension_context``."""
from __future__ import annotations

from ..array_family import HOST_FAMILY

__all__ = ["extension_context"]


def extension_context(extension_name=HOST_FAMILY, **kw):
    """The context of extension ``extension_name`` (deprecated: use
    :func:`nnabla.ext_utils.get_extension_context`, which this calls).

    Args:
        extension_name (str): ``'cpu'``, ``'cuda'``, ``'cudnn'``, ... (``'cuda.cudnn'`` is
            accepted as nnabla's old spelling of ``'cudnn'``).
        **kw: passed to the extension's context factory (``device_id``,
            ``type_config``).

    Returns:
        nnabla.Context

    Example:
        >>> import warnings
        >>> from nnabla.contrib.context import extension_context
        >>> extension_context('cpu').backend
        ['cpu:float']
    """
    from ..ext_utils import get_extension_context
    from ..logger import logger

    logger.warning("Deprecated API. Use `nnabla.ext_util.get_extension_context(ext_name, "
                   "**kw)`.")
    if extension_name == "cuda.cudnn":
        extension_name = "cudnn"
    return get_extension_context(extension_name, **kw)
