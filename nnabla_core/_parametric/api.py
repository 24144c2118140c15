"""The ``parametric_function_api`` decorator and small helpers shared by PF modules."""

import functools
import inspect

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

        @functools.wraps(func)
        def parametric(*args, **kwargs):
            bound = extended.bind(*args, **kwargs)
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
