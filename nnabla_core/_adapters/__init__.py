"""Hand-written ``F.*`` wrappers whose Python signature differs from the function type's.

Each category module exports ``__all__``; its functions override the
spec-generated function of the same name in ``nnabla.functions``.
"""
from __future__ import annotations

import functools
import inspect

# Composite F members (no function type of their own): the parameters that are arrays.
COMPOSITE_INPUTS = {"clip_by_norm": ("x",), "clip_by_value": ("x",), "dot": ()}
# Inputs the normalization adapters take as None ("omit": zeros, ones or batch statistics).
NONE_MEANS_DEFAULT = ("beta", "gamma", "mean", "variance")


def axes_list(axes):
    """``axes`` as a list for a function type's ``ints`` argument: an int becomes ``[axes]``,
    a list, tuple, range or 1-D array its items; anything else ``[axes]``, so the argument's
    check names it (a dict or str is not read as its keys or characters)."""
    if isinstance(axes, (list, tuple, range)):
        return list(axes)
    if getattr(axes, "ndim", None) == 1:
        return axes.tolist()
    return [axes]


def _input_names(name, signature):
    """The parameters of adapter ``name`` that must be Variables or NdArrays, with whether
    None is accepted: the function type's inputs by name, else by position (gather_nd's
    ``data`` is GatherNd's ``x``). Index inputs are left out (they may be array-likes)."""
    from .._spec import BY_SNAKE
    params = list(signature.parameters.values())
    if name in COMPOSITE_INPUTS:
        return tuple((n, signature.parameters[n].default is None)
                     for n in COMPOSITE_INPUTS[name])
    spec = BY_SNAKE.get(name)
    if spec is None:
        return ()
    names = []
    for k, inp in enumerate(spec.inputs):
        if inp.variadic:
            return ()
        param = signature.parameters.get(inp.name)
        if param is None and k < len(params):
            param = params[k]
        if param is None or inp.integer or param.kind not in (
                param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            continue
        names.append((param.name, inp.optional or param.default is None
                      or param.name in NONE_MEANS_DEFAULT))
    return tuple(names)


def checked(func):
    """``func`` (an adapter) that, when it fails, first checks its array inputs: one that is
    not a Variable or NdArray raises TypeError naming ``F.<name>`` and the input, instead of
    the error it caused inside (``'list' object has no attribute 'shape'``). The check runs
    only on failure, so a working call costs one more frame."""
    from .._nd_array import NdArray
    from .._variable import Variable
    signature = inspect.signature(func)
    names = _input_names(func.__name__, signature)
    if not names:
        return func
    api = f"F.{func.__name__}"

    def check(args, kwargs):
        """The TypeError of the first input that is not an array, or None."""
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return None
        for name, optional in names:
            value = bound.arguments.get(name)
            if value is None and (optional or name not in bound.arguments):
                continue
            if isinstance(value, (Variable, NdArray)) or getattr(
                    value, "_is_proto_variable", False):
                continue
            return TypeError(f"{api}: input '{name}' is of type {type(value).__name__}; "
                             "expected nnabla.Variable or nnabla.NdArray")
        return None

    @functools.wraps(func)
    def adapter(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (AttributeError, TypeError, ValueError, IndexError):
            problem = check(args, kwargs)
            if problem is not None:
                raise problem from None
            raise
    return adapter
