"""``nn.Module``: a building block owning its parameters and sub-modules.

Every method a subclass defines runs inside the module's own parameter scope and, for
``nn.graph_def``, inside the module's recording scope: calling a module on proto
variables records one network per outermost call, with function names prefixed by the
module path (``@res_unit/@conv1/Convolution``). Parameters are named by the path of the
sub-module holding them (``@conv1/conv/W``).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from functools import wraps

from .. import parameter as _parameter
from ._proto import current_graph_builder


def insert_parent_name(name, params):
    """``params`` with every key prefixed by ``@name/``."""
    return OrderedDict((f"@{name}/{k}", v) for k, v in params.items())


class ParamMemo:
    """Remembers the parameters already reported, so shared ones are listed once."""

    def __init__(self):
        self._memo = set()

    def filter_and_update(self, params):
        found = OrderedDict()
        for k, v in params.items():
            key = id(v._node.data)
            if key not in self._memo:
                found[k] = v
                self._memo.add(key)
        return found


class MetaClass(type):
    """Wraps the methods of a Module subclass in its parameter and recording scopes."""

    @staticmethod
    def method_wrapper(method):
        @wraps(method)
        def wrapped(self, *args, **kwargs):
            from .graph_def import module_scope
            with module_scope(current_graph_builder(), self):
                with _parameter.parameter_scope("", self.parameter_scope):
                    return method(self, *args, **kwargs)
        return wrapped

    def __new__(mcs, classname, bases, class_dict):
        if bases:
            class_dict = {name: MetaClass.method_wrapper(attr)
                          if callable(attr) and not isinstance(attr, type) else attr
                          for name, attr in class_dict.items()}
        return type.__new__(mcs, classname, bases, class_dict)


class Module(metaclass=MetaClass):
    """Base class of models built from functions, parametric functions and sub-modules.

    Subclasses implement :meth:`call`; sub-modules assigned as attributes are registered
    (``submodules``) and their parameters appear in :meth:`get_parameters` under
    ``@<attribute>/``.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.parametric_functions as PF
        >>> class Mlp(nn.Module):
        ...     def __init__(self, units):
        ...         self.units = units
        ...     def call(self, x):
        ...         return PF.affine(x, self.units, name="fc")
        >>> mlp = Mlp(4)
        >>> y = mlp(nn.Variable((2, 3)))
        >>> list(mlp.get_parameters())
        ['fc/affine/W', 'fc/affine/b']
    """

    _recursive_attrs = ["training"]

    def __repr__(self):
        return self.__class__.__name__

    @property
    def training(self):
        """Whether the module is in training mode (set recursively on sub-modules)."""
        return self.__dict__.setdefault("training", True)

    @property
    def parameter_scope(self):
        """The module's own parameter scope (an OrderedDict)."""
        return self.__dict__.setdefault("_parameter_scope", OrderedDict())

    @property
    def submodules(self):
        """Sub-modules by attribute name."""
        return self.__dict__.setdefault("_submodules", OrderedDict())

    def get_scope_name(self):
        scope_name = ""
        for name, module in self.submodules.items():
            scope_name = f"@{name}/{module.get_scope_name()}"
            break
        return scope_name.strip("/")

    def get_parameters(self, recursive=True, grad_only=False, memo=None):
        """The parameters of this module (and its sub-modules: ``@name/...`` keys).

        Args:
            recursive (bool): include sub-modules.
            grad_only (bool): only parameters with ``need_grad``.

        Returns:
            OrderedDict: name -> Variable, each shared parameter once.
        """
        memo = memo if memo is not None else ParamMemo()
        params = OrderedDict()
        if recursive:
            for name, module in self.submodules.items():
                params.update(insert_parent_name(name, module.get_parameters(
                    recursive=recursive, grad_only=grad_only, memo=memo)))
        with _parameter.parameter_scope("", self.parameter_scope):
            params.update(memo.filter_and_update(_parameter.get_parameters(grad_only=grad_only)))
        return params

    def load_parameters(self, path, extension=".h5", raise_if_missing=True):
        """Load parameters from a file (``.h5``, ``.protobuf``, ``.nntxt``, ``.nnp``)."""
        scope = OrderedDict()
        with _parameter.parameter_scope("", scope):
            _parameter.load_parameters(path, extension=extension)
            params = _parameter.get_parameters(grad_only=False)
        self.set_parameters(params, raise_if_missing=raise_if_missing)

    def save_parameters(self, path, extension=".h5"):
        """Save the parameters of this module to a file."""
        _parameter.save_parameters(path, params=self.get_parameters(grad_only=False),
                                   extension=extension)

    def set_parameter(self, key, param, raise_if_missing=False):
        """Set parameter ``key`` (``@sub/...`` keys go to the sub-module ``sub``).

        Raises:
            ValueError: for a malformed ``@`` key, or a missing sub-module when
                ``raise_if_missing``.
        """
        if key.startswith("@"):
            pos = key.find("/")
            if pos < 0 or pos == len(key) - 1:
                raise ValueError(f"Invalid parameter key {key}. A module parameter scope "
                                 f"represented as `@name` must be followed by `/`.")
            name, subkey = key[1:pos], key[pos + 1:]
            if name in self.submodules:
                self.submodules[name].set_parameter(subkey, param,
                                                    raise_if_missing=raise_if_missing)
            elif raise_if_missing:
                raise ValueError(f"A child module {name} cannot be found in {self}. This "
                                 f"error is raised because `raise_if_missing` is specified "
                                 f"as True. Please turn off if you allow it.")
            return
        with _parameter.parameter_scope("", self.parameter_scope):
            _parameter.set_parameter(key, param)

    def set_parameters(self, params, raise_if_missing=False):
        """Set every parameter of ``params`` (name -> Variable)."""
        for key, param in params.items():
            self.set_parameter(key, param, raise_if_missing=raise_if_missing)

    def update_parameter(self):
        self.set_parameters(self.get_parameters())

    def zero_grad(self):
        """Set the gradients of the parameters to 0."""
        for param in self.get_parameters().values():
            param.grad.zero()

    def __len__(self):
        return len(self.submodules)

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            self.submodules[name] = value
            value.__dict__["_name"] = name
            value.__dict__["_parent"] = self
            return
        self.__dict__[name] = value
        if name in self._recursive_attrs:
            for module in self.submodules.values():
                setattr(module, name, value)

    def __getattr__(self, name):
        submodules = self.__dict__.get("_submodules", {})
        if name in submodules:
            return submodules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def name(self):
        """The attribute name in the parent, else the class name in snake case."""
        if "_name" in self.__dict__:
            return self.__dict__["_name"]
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.__class__.__name__).lower()

    @property
    def parent(self):
        return self.__dict__.get("_parent", None)

    def is_root(self):
        return self.parent is None

    def get_path_name(self):
        """``@name`` joined along the parents (``@res_unit/@conv1``)."""
        if self.is_root():
            return f"@{self.name}"
        parent = self.parent.get_path_name()
        return f"{parent}/@{self.name}" if parent else f"@{self.name}"

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        """Build the module's graph on its inputs; subclasses implement it."""
        raise NotImplementedError("call(*av, **kw) must be implemented.")
