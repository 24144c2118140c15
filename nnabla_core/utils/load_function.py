"""Functions of NNP ``Function`` messages (nnabla's ``nnabla.utils.load_function``).

``_create_function_instance(ctx, f)`` gives the function instance (as nnabla's
``nnabla.function.<Type>(ctx, ...)``, see :mod:`nnabla._function_instance`) that the
message ``f`` describes: called on its inputs (the present ones, as an NNP file lists them)
it creates the function, ``func(*inputs, n_outputs=..., auto_forward=...)``; or it runs
through ``setup(inputs, outputs)``, ``forward`` and ``backward`` as nnabla's are.

Example:
    >>> import numpy as np, nnabla as nn
    >>> from nnabla.utils import nnabla_pb2
    >>> from nnabla.utils.load_function import _create_function_instance
    >>> f = nnabla_pb2.Function(name="r", type="MulScalar")
    >>> f.mul_scalar_param.val = 3.0
    >>> func = _create_function_instance(nn.get_current_context(), f)
    >>> func.arguments["val"]
    3.0
    >>> y = func(nn.Variable.from_numpy_array(np.ones(2)), auto_forward=True)
    >>> y.d.tolist()
    [3.0, 3.0]
"""
from __future__ import annotations

from .._function_instance import FunctionInstance
from ._nnp_functions import read_arguments, spec_of

__all__ = ["_create_function_instance"]


def _create_function_instance(ctx, f):
    """The function the NNP ``Function`` message ``f`` describes, in context ``ctx``.

    Raises:
        ValueError: for an unknown function type or unreadable arguments.
    """
    where = f"function {f.name!r}: " if f.name else ""
    spec = spec_of(f.type, where)
    return FunctionInstance(ctx, spec, read_arguments(f, where), where)
