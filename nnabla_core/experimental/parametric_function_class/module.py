"""The base class of the class-style parametric functions
(``nnabla.experimental.parametric_function_class.module``)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ... import parameter as _parameter
from ..._variable import Variable
from ...logger import logger

__all__ = ["Module"]


def _initial_value(init, shape, where):
    """``init(shape)`` for an initializer, or ``init`` itself (an array of ``shape``)."""
    if callable(init):
        return np.asarray(init(shape))
    value = np.asarray(init)
    if value.shape != tuple(shape):
        raise ValueError(f"{where}: the initial value has shape {value.shape}; expected "
                         f"{tuple(shape)}")
    return value


def _new_parameter(init, shape, need_grad, where):
    value = _initial_value(init, shape, where).astype(np.float32, copy=False)
    return Variable.from_numpy_array(value).apply(need_grad=need_grad)


class Module:
    """Mix-in of the parametric function classes: a module holds its parameters as
    :class:`nnabla.Variable` attributes (not in the global parameter scope) and other
    modules as attributes.

    A parameter's name is ``<prefix>/<attribute>``, where the prefix is the path of
    attribute names from the top module (empty for the top module itself, so a single
    ``Affine``'s weight is ``'/W'``, as in nnabla).
    """

    def __init__(self):
        pass

    def get_modules(self, memo=None, prefix=""):
        """Yield ``(prefix, module)`` for this module and, depth first, its submodules
        (each once).

        Args:
            memo (set, optional): modules already visited.
            prefix (str, optional): this module's name.
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        memo.add(self)
        yield prefix, self
        for name, value in self.__dict__.items():
            if isinstance(value, Module):
                sub = f"{prefix}/{name}" if prefix != "" else name
                yield from value.get_modules(memo, sub)

    def get_parameters(self, grad_only=True):
        """The parameters of this module and its submodules.

        Args:
            grad_only (bool): only those with ``need_grad=True``.

        Returns:
            OrderedDict: name -> :class:`nnabla.Variable`.
        """
        params = OrderedDict()
        for prefix, module in self.get_modules():
            for name, value in module.__dict__.items():
                if not isinstance(value, Variable):
                    continue
                if grad_only and not value.need_grad:
                    continue
                params[f"{prefix}/{name}"] = value
        return params

    def save_parameters(self, path, grad_only=False):
        """Save the parameters (``.h5`` or ``.protobuf``, chosen by the extension).

        Args:
            path (str or file object): where to write.
            grad_only (bool): only those with ``need_grad=True``.
        """
        _parameter.save_parameters(path, self.get_parameters(grad_only=grad_only))

    def load_parameters(self, path):
        """Load the values of this module's parameters from a file written by
        :meth:`save_parameters` (the file's parameters pass through the global
        parameter scope and are removed from it).

        Raises:
            ValueError: the file lacks one of the module's parameters.
        """
        _parameter.load_parameters(path)
        for name, param in self.get_parameters(grad_only=False).items():
            loaded = _parameter.pop_parameter(name)
            if loaded is None:
                raise ValueError(f"{type(self).__name__}.load_parameters: {path!r} has no "
                                 f"parameter {name!r}")
            if tuple(loaded.shape) != tuple(param.shape):
                raise ValueError(f"{type(self).__name__}.load_parameters: parameter {name!r} "
                                 f"of {path!r} has shape {tuple(loaded.shape)}; the module's "
                                 f"has {tuple(param.shape)}")
            param.d = loaded.d.copy()
            logger.info(f"`{name}` loaded.")
