"""Functions of NNP ``Function`` messages (nnabla's ``nnabla.utils.load_function``).

``_create_function_instance(ctx, f)`` gives a callable bound to a context whose call
creates the function ``f`` describes on its inputs (the present ones, as an NNP file lists
them), as ``nnabla.function`` instances are called: ``func(*inputs, n_outputs=...,
auto_forward=...)``.

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

from .. import _dispatch
from ..auto_forward import auto_forward as _auto_forward
from ..context import context_scope
from ._nnp_functions import place_inputs, read_arguments, spec_of

__all__ = ["_create_function_instance"]


class NnpFunctionInstance:
    """A function type with its arguments and context, created on inputs when called.

    Attributes:
        name (str): the function type (``'Convolution'``).
        arguments (dict): its arguments.
    """

    def __init__(self, ctx, spec, arguments, where=""):
        self.ctx, self.spec, self.arguments, self._where = ctx, spec, arguments, where

    @property
    def name(self):
        return self.spec.name

    @property
    def args(self):
        return self.arguments

    def min_outputs(self):
        return len(self.spec.outputs)

    def __repr__(self):
        return f"{self.spec.name}({self.arguments})"

    def __call__(self, *inputs, n_outputs=-1, auto_forward=True, outputs=None):
        """The outputs of the function on ``inputs`` (Variables or NdArrays; absent optional
        inputs left out), in this instance's context; run at once if ``auto_forward``
        (the default, as for nnabla's function instances)."""
        placed = place_inputs(self.spec, self.arguments, list(inputs), where=self._where)
        with context_scope(self.ctx), _auto_forward(bool(auto_forward)):
            return _dispatch.call(self.spec, tuple(placed), dict(self.arguments), n_outputs,
                                  outputs)


def _create_function_instance(ctx, f):
    """The function the NNP ``Function`` message ``f`` describes, in context ``ctx``.

    Raises:
        ValueError: for an unknown function type or unreadable arguments.
    """
    where = f"function {f.name!r}: " if f.name else ""
    spec = spec_of(f.type, where)
    return NnpFunctionInstance(ctx, spec, read_arguments(f, where), where)
