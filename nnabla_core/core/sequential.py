"""``nn.Sequential``: modules applied one after the other."""
from __future__ import annotations

from .module import Module


class Sequential(Module):
    """Applies its sub-modules in order; each one's output is the next one's input.

    Args:
        *args: modules, or ``(name, module)`` pairs (unnamed ones are called
            ``<module name>_<index>``).

    Raises:
        TypeError: for an item that is not a Module.

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> class Fc(nn.Module):
        ...     def __init__(self, n):
        ...         self.n = n
        ...     def call(self, x):
        ...         return PF.affine(x, self.n)
        >>> net = nn.Sequential(("fc1", Fc(8)), ("fc2", Fc(2)))
        >>> net(nn.Variable((4, 3))).shape
        (4, 2)
    """

    def __init__(self, *args, **kwargs):
        for index, item in enumerate(args):
            name, module = item if isinstance(item, tuple) else (None, item)
            if not isinstance(module, Module):
                raise TypeError(f"The input layer {self.name}/{module.__class__.__name__} "
                                f"should be a instance of nn.Module")
            self.submodules[name if name is not None else f"{module.name}_{index}"] = module

    def call(self, *args, **kwargs):
        result = None
        for module in self.submodules.values():
            result = module(*args, **kwargs)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        return result
