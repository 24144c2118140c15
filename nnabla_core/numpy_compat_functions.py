"""numpy-compatible operations on nnabla arrays (``nnabla.numpy_compat_functions``).

``dot`` is the one nnabla 1.39 has; it is also ``nnabla.functions.dot``.

Example:
    >>> import numpy as np, nnabla as nn
    >>> from nnabla.numpy_compat_functions import dot
    >>> a = nn.NdArray.from_numpy_array(np.eye(2, dtype=np.float32))
    >>> dot(a, a).data.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
"""
from ._adapters.composite import dot

__all__ = ["dot"]
