"""The ``parametric_function_api`` decorator and small helpers shared by PF modules."""

import functools
import inspect
import numbers

import numpy as np

from .. import parameter as _parameter


def parametric_function_api(scope_name=None, param_desc=None):
    """Makes a function parametric: it runs inside the parameter scope ``scope_name``.

    The decorated function gains a last argument ``name=None``; when given, the call runs
    under ``parameter_scope(name)`` and then ``parameter_scope(scope_name)``, so its
    parameters are named ``<name>/<scope_name>/<param>``. The signature seen by
    ``inspect.signature`` is the original one plus ``name``.

    Args:
        scope_name (str, optional): Scope of the function's parameters; defaults to
            the function's name.
        param_desc (list of tuple, optional): ``(name, description, shape, need_grad)``
            of each registered parameter, appended to the docstring.

    Returns:
        callable: A decorator.

    Raises:
        ValueError: If the decorated function has no ``fix_parameters`` argument.
    """
    def decorate(func):
        signature = inspect.signature(func)
        if "fix_parameters" not in signature.parameters:
            raise ValueError(f"parametric_function_api: {func.__name__}{signature} must take "
                             f"a 'fix_parameters' argument")
        scope = scope_name if scope_name is not None else func.__name__
        extended = _with_name_argument(signature)

        # The inputs and sizes of nnabla's own layers are checked; a user's function
        # decorated with this may take anything.
        first = next(iter(signature.parameters)) \
            if func.__module__.startswith("nnabla._parametric.") else None

        @functools.wraps(func)
        def parametric(*args, **kwargs):
            bound = extended.bind(*args, **kwargs)
            if first is not None:
                check_arguments(f"PF.{func.__name__}", first, bound.arguments)
            name = bound.arguments.pop("name", None)
            if name is None:
                with _parameter.parameter_scope(scope):
                    return func(*bound.args, **bound.kwargs)
            with _parameter.parameter_scope(name), _parameter.parameter_scope(scope):
                return func(*bound.args, **bound.kwargs)

        parametric.__signature__ = extended
        parametric.__doc__ = _document(func.__doc__ or "", scope, param_desc)
        parametric.__parametric_function_api_base__ = func
        parametric.__scope_name__ = scope
        return parametric

    return decorate


def _with_name_argument(signature):
    """Returns ``signature`` with a trailing ``name=None`` argument."""
    params = list(signature.parameters.values())
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if any(p.kind in (p.VAR_POSITIONAL, p.KEYWORD_ONLY) for p in params):
        kind = inspect.Parameter.KEYWORD_ONLY
    insert_at = len(params)
    if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        insert_at -= 1
    params.insert(insert_at, inspect.Parameter("name", kind, default=None))
    return signature.replace(parameters=params)


def _document(doc, scope, param_desc):
    """Appends the registered parameters and the ``name`` note to a docstring."""
    lines = [doc.rstrip(), ""]
    if param_desc:
        lines += ["    Parameters to be registered",
                  f"        In the parameter scope ``\"{scope}\"``:", ""]
        lines += [f"        * {p[0]} (``need_grad={p[3]}``): {p[1]} (shape: ``{p[2]}``)"
                  for p in param_desc]
        lines.append("")
    lines += ["    Note:",
              "        Passing ``name=...`` is the same as calling the function inside",
              "        ``nn.parameter_scope(name)``.", ""]
    return "\n".join(lines)


def get_or_create(name, shape, initializer, fix_parameters, need_grad=True):
    """Fetches a PF parameter: registered with ``need_grad``, returned as trainable
    unless ``fix_parameters`` (nnabla's convention for learnable parameters)."""
    return _parameter.get_parameter_or_create(
        name, shape, initializer, need_grad, not fix_parameters)


def as_list(value):
    """Returns ``value`` as a list: iterables are listed, scalars wrapped."""
    return list(value) if hasattr(value, "__iter__") else [value]


def flat_size(shape):
    """Product of a shape's dimensions, as a Python int."""
    return int(np.prod(shape, dtype=np.int64))


def _int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _ints(value):
    if isinstance(value, np.ndarray):
        value = value.tolist() if value.ndim == 1 else None
    return isinstance(value, (tuple, list)) and len(value) > 0 and all(map(_int, value))


# Arguments of the parametric functions that are sizes: name -> (int allowed, tuple allowed).
_SIZE_ARGUMENTS = {
    "n_outmaps": (True, True), "outmaps": (True, False), "n_inputs": (True, False),
    "n_features": (True, False), "kernel": (False, True), "multiplier": (True, False),
    "divisor": (True, False), "group": (True, False),
}
# Arguments naming axes of the input.
_AXIS_ARGUMENTS = ("axes", "base_axis", "channel_axis", "batch_axis")
_EXPECTED = {(True, True): "a positive int or a tuple of positive ints",
             (True, False): "a positive int",
             (False, True): "a tuple of positive ints, one per spatial axis (e.g. (3, 3))"}


def _is_variable(value):
    from .._nd_array import NdArray
    from .._variable import Variable
    return isinstance(value, (Variable, NdArray)) or getattr(value, "_is_proto_variable", False)


def check_arguments(api, first, arguments):
    """Raise TypeError (wrong type) or ValueError (not positive) naming ``api`` and the
    argument when the first argument (the input) is not a variable, or a size argument
    (outmaps, kernel, ...) is not one.

    Nothing is created before this check, so a failed call changes no parameter.
    """
    value = arguments.get(first)
    if not _is_variable(value):
        raise TypeError(f"{api}: argument '{first}' is of type {type(value).__name__} "
                        f"({_short(value)}); expected an nnabla.Variable")
    ndim = len(getattr(arguments[first], "shape", ()))
    for arg in _AXIS_ARGUMENTS:
        axes = arguments.get(arg)
        if axes is None:
            continue
        for axis in (axes if isinstance(axes, (tuple, list)) else [axes]):
            if not _int(axis):
                raise TypeError(f"{api}: argument '{arg}' is {_short(axes)}; expected "
                                "int axes")
            if not -ndim <= axis < ndim:
                raise ValueError(f"{api}: argument '{arg}' is {_short(axes)}; expected axes "
                                 f"in [{-ndim}, {ndim}): '{first}' has shape "
                                 f"{tuple(arguments[first].shape)}")
    for arg, (scalar, sequence) in _SIZE_ARGUMENTS.items():
        if arg not in arguments:
            continue
        value = arguments[arg]
        if scalar and _int(value):
            sizes = [value]
        elif sequence and _ints(value):
            sizes = list(value)
        else:
            raise TypeError(f"{api}: argument '{arg}' is {_short(value)} (of type "
                            f"{type(value).__name__}); expected {_EXPECTED[scalar, sequence]}")
        if any(v <= 0 for v in sizes):
            raise ValueError(f"{api}: argument '{arg}' is {_short(value)}; expected "
                             f"{_EXPECTED[scalar, sequence]}")


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
