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

        # The arguments of nnabla's own layers are checked; a user's function decorated
        # with this may take anything.
        api = f"PF.{func.__name__}"
        first = next(iter(signature.parameters)) \
            if func.__module__.startswith("nnabla._parametric.") else None
        checks = argument_checks(signature) if first is not None else {}

        @functools.wraps(func)
        def parametric(*args, **kwargs):
            bound = extended.bind(*args, **kwargs)
            if first is not None:
                bound.apply_defaults()      # defaults are checked against the input too
                check_arguments(api, first, bound.arguments, checks)
            name = bound.arguments.pop("name", None)
            outer = _parameter._start_log()
            failed = True
            try:
                if name is None:
                    with _parameter.parameter_scope(scope):
                        result = func(*bound.args, **bound.kwargs)
                else:
                    with _parameter.parameter_scope(name), _parameter.parameter_scope(scope):
                        result = func(*bound.args, **bound.kwargs)
                failed = False
                return result
            except (TypeError, ValueError) as e:
                if first is not None and outer is None:
                    _name_the_layer(e, api)
                raise
            finally:
                _parameter._end_log(outer, failed)

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
    "divisor": (True, False), "group": (True, False), "r": (True, False),
    "num_groups": (True, False), "state_size": (True, False), "num_heads": (True, False),
    "embed_dim": (True, False), "num_layers": (True, False),
    "num_encoder_layers": (True, False), "num_decoder_layers": (True, False),
    "dim_feedforward": (True, False), "deformable_group": (True, False),
    "num_bits": (True, False), "max_iter": (True, False),
    "batch_size": (True, False), "n_w": (True, False), "n_b": (True, False),
}
# Arguments naming axes of the input; those that may list several.
_AXIS_ARGUMENTS = ("axes", "base_axis", "channel_axis", "batch_axis", "dim")
_AXIS_LISTS = ("axes", "batch_axis")
_EXPECTED = {(True, True): "a positive int or a tuple of positive ints",
             (True, False): "a positive int",
             (False, True): "a tuple of positive ints, one per spatial axis (e.g. (3, 3))"}


def _is_variable(value):
    from .._nd_array import NdArray
    from .._variable import Variable
    return isinstance(value, (Variable, NdArray)) or getattr(value, "_is_proto_variable", False)


def _name_the_layer(error, api):
    """Prefix ``api`` to an argument error raised by a function the layer called
    (``F.convolution: argument 'pad' ...`` becomes ``PF.convolution: F.convolution: ...``),
    so the message names what the user called."""
    message = str(error)
    if error.args and message.startswith(("F.", "PF.", "nn.")) and \
            not message.startswith(f"{api}:"):
        error.args = (f"{api}: {message}",) + tuple(error.args[1:])


# Arguments of the layers that are arrays (Variables), other than the first.
_VARIABLE_ARGUMENTS = ("h", "c", "z", "offset", "mask", "key", "value", "tgt", "memory",
                       "additive_mask", "key_padding_mask")
# Arguments whose default is an int but that take any real number (quantization levels).
_REAL_ARGUMENTS = ("ql_min", "ql_max", "ql_min_w", "ql_max_w", "ql_min_b", "ql_max_b")
# Arguments with a None default that take a callable (a function applied to a tensor).
_CALLABLE_ARGUMENTS = ("apply_w", "apply_b", "activation")
# Sizes with a None default (None: derived from another argument).
_OPTIONAL_SIZES = ("k_embed_dim", "v_embed_dim", "out_dim")


def _check_variable(api, arg, value, optional):
    if value is None and optional:
        return value
    if not _is_variable(value):
        raise TypeError(f"{api}: argument '{arg}' is of type {type(value).__name__} "
                        f"({_short(value)}); expected an nnabla.Variable"
                        + (" or None" if optional else ""))
    return value


def _check_initializer(api, arg, value):
    if value is None or isinstance(value, np.ndarray) or callable(value):
        return value
    if arg == "param_init" and isinstance(value, dict):
        return value
    expected = ("a dict of initializers by parameter name" if arg == "param_init" else
                "a numpy.ndarray or an initializer (a callable such as "
                "nnabla.initializer.UniformInitializer)")
    raise TypeError(f"{api}: argument '{arg}' is of type {type(value).__name__} "
                    f"({_short(value)}); expected {expected} or None")


def _check_rng(api, arg, value):
    if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
        return value
    raise TypeError(f"{api}: argument '{arg}' is of type {type(value).__name__}; expected a "
                    "numpy.random.RandomState or None")


def _check_callable(api, arg, value):
    if value is not None and not callable(value):
        raise TypeError(f"{api}: argument '{arg}' is of type {type(value).__name__} "
                        f"({_short(value)}); expected a callable or None")
    return value


def _check_kind(kind):
    """A check of one argument by the kind of nnabla.Function arguments (``'bool'``,
    ``'int'``, ``'float'``, ``'str'``, ``'ints'``), as the ``F`` functions check theirs."""
    from .._spec.args import check_value

    def check(api, arg, value):
        if kind.endswith("?") and value is None:
            return None
        return check_value(api, arg, kind, value)
    return check


def argument_checks(signature):
    """``{argument: check(api, name, value)}`` for a layer's arguments besides the input,
    the sizes and the axes (:func:`check_arguments`), from their names and defaults: a bool
    default takes bools, an int default ints, a float default reals, a str default strs;
    initializers, random generators, callables and Variables by name."""
    checks = {}
    for position, (arg, p) in enumerate(signature.parameters.items()):
        default = p.default
        if arg in _SIZE_ARGUMENTS and isinstance(default, str):
            checks[arg] = _check_kind("str")    # a name, not a size (sync BN's group)
            continue
        if position == 0 or arg in _SIZE_ARGUMENTS or arg in _AXIS_ARGUMENTS or \
                arg in ("name", "outputs", "comm"):
            continue
        if arg in _VARIABLE_ARGUMENTS or arg.endswith("_mask"):
            optional = default is None
            checks[arg] = lambda api, a, v, o=optional: _check_variable(api, a, v, o)
        elif arg.endswith("_init") or arg == "initializer":
            checks[arg] = _check_initializer
        elif arg == "rng":
            checks[arg] = _check_rng
        elif arg in _CALLABLE_ARGUMENTS:
            checks[arg] = _check_callable
        elif arg in _OPTIONAL_SIZES:
            checks[arg] = _check_optional_size
        elif arg in ("pad", "stride", "dilation", "output_padding"):
            checks[arg] = _check_kind("ints?")
        elif isinstance(default, bool):
            checks[arg] = _check_kind("bool")
        elif arg in _REAL_ARGUMENTS or isinstance(default, float):
            checks[arg] = _check_kind("float")
        elif isinstance(default, int):
            checks[arg] = _check_kind("int")
        elif isinstance(default, str):
            checks[arg] = _check_kind("str")
        elif isinstance(default, tuple) and all(_int(v) for v in default):
            checks[arg] = _check_kind("ints")
    return checks


def _check_optional_size(api, arg, value):
    if value is None:
        return value
    if not _int(value):
        raise TypeError(f"{api}: argument '{arg}' is {_short(value)} (of type "
                        f"{type(value).__name__}); expected a positive int or None")
    if value <= 0:
        raise ValueError(f"{api}: argument '{arg}' is {value!r}; expected a positive int "
                         "or None")
    return value


def _check_geometry(api, first, arguments):
    """The kernel has one size per spatial axis of the input (those after base_axis and the
    channel axis); pad, stride and dilation (given as tuples) one value per kernel axis; pad
    is non-negative, stride and dilation positive."""
    kernel = arguments.get("kernel")
    shape = tuple(arguments[first].shape)
    if kernel is not None and "base_axis" in arguments:
        spatial = len(shape) - arguments["base_axis"] % max(len(shape), 1) - 1
        if len(kernel) != spatial:
            raise ValueError(f"{api}: argument 'kernel' is {_short(kernel)}; expected "
                             f"{spatial} sizes, one per spatial axis of '{first}' {shape} "
                             f"after base_axis {arguments['base_axis']} and the channels")
    for arg, low in (("pad", 0), ("stride", 1), ("dilation", 1)):
        values = arguments.get(arg)
        if values is None or not isinstance(values, (tuple, list)):
            continue
        if kernel is not None and len(values) != len(kernel):
            raise ValueError(f"{api}: argument '{arg}' is {_short(values)}; expected "
                             f"{len(kernel)} values, one per axis of kernel {tuple(kernel)}")
        if any(v < low for v in values):
            raise ValueError(f"{api}: argument '{arg}' is {_short(values)}; expected "
                             + ("non-negative values" if low == 0 else "positive values"))


def check_arguments(api, first, arguments, checks=None):
    """Raise TypeError (wrong type) or ValueError (a wrong value) naming ``api`` and the
    argument when the first argument (the input) is not a variable, a size argument
    (outmaps, kernel, ...) is not one, an axis is not one of the input, or another argument
    fails its check of :func:`argument_checks` (``checks``).

    Nothing is created before this check, so a failed call changes no parameter.
    """
    value = arguments.get(first)
    if not _is_variable(value):
        raise TypeError(f"{api}: argument '{first}' is of type {type(value).__name__} "
                        f"({_short(value)}); expected an nnabla.Variable")
    for arg, check in (checks or {}).items():
        if arg in arguments:
            arguments[arg] = check(api, arg, arguments[arg])
    ndim = len(getattr(arguments[first], "shape", ()))
    for arg in _AXIS_ARGUMENTS:
        if arg not in arguments:
            continue
        axes = arguments[arg]
        several = isinstance(axes, (tuple, list)) and arg in _AXIS_LISTS
        for axis in (axes if several else [axes]):
            if not _int(axis):
                raise TypeError(f"{api}: argument '{arg}' is {_short(axes)}; expected "
                                + ("an int axis or a list of them" if arg in _AXIS_LISTS
                                   else "an int axis"))
            if not -ndim <= axis < ndim:
                raise ValueError(f"{api}: argument '{arg}' is {_short(axes)}; expected axes "
                                 f"in [{-ndim}, {ndim}): '{first}' has shape "
                                 f"{tuple(arguments[first].shape)}")
    for arg, (scalar, sequence) in _SIZE_ARGUMENTS.items():
        if arg not in arguments or arg in (checks or {}):
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
    _check_geometry(api, first, arguments)


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
