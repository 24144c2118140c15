"""Coercion and validation of function arguments by kind.

A kind is a short name used in :class:`~nnabla._spec.base.Arg`; a trailing
``?`` allows ``None``. Coercion accepts what nnabla accepts (numpy scalars,
lists for tuples) and raises a ``TypeError`` naming the function and argument
otherwise.
"""
from __future__ import annotations

import numbers

import numpy as np

from .base import Arg, FunctionSpec


def _int(spec, name, v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        raise spec.type_error(name, "int", v)
    return int(v)


def _float(spec, name, v):
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)):
        return float(v)
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    raise spec.type_error(name, "float", v)


def _bool(spec, name, v):
    if isinstance(v, (bool, np.bool_)) or (isinstance(v, numbers.Integral) and v in (0, 1)):
        return bool(v)
    raise spec.type_error(name, "bool", v)


def _str(spec, name, v):
    if isinstance(v, str):
        return v
    raise spec.type_error(name, "str", v)


def _seq(item):
    def coerce(spec, name, v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (numbers.Number, np.number)) and not isinstance(v, bool):
            v = (v,)
        if not isinstance(v, (list, tuple)):
            raise spec.type_error(name, "a tuple or list", v)
        return tuple(item(spec, name, e) for e in v)
    return coerce


def _any(spec, name, v):
    return v


def _int_or_none(spec, name, v):
    return None if v is None else _int(spec, name, v)


KINDS = {
    "int": _int,
    "float": _float,
    "bool": _bool,
    "str": _str,
    "ints": _seq(_int),
    "optints": _seq(_int_or_none),      # items may be None (slice bounds)
    "floats": _seq(_float),
    "any": _any,
}


def coerce(spec, arg, value):
    """Return ``value`` converted to ``arg``'s kind, or raise naming both."""
    kind = arg.kind
    if kind.endswith("?"):
        if value is None:
            return None
        kind = kind[:-1]
    try:
        convert = KINDS[kind]
    except KeyError:
        raise ValueError(f"{spec.api_name}: spec uses unknown argument kind {kind!r}") from None
    value = convert(spec, arg.name, value)
    if arg.choices and value not in arg.choices:
        raise spec.value_error(arg.name, f"one of {list(arg.choices)}", value)
    return value


class Api:
    """A public function outside the spec table (``F.clip_by_norm``): raises the argument
    errors of a :class:`~nnabla._spec.base.FunctionSpec` under its own name."""

    def __init__(self, api_name):
        self.api_name = api_name

    shape_error = FunctionSpec.shape_error
    value_error = FunctionSpec.value_error
    type_error = FunctionSpec.type_error


def check_value(api, name, kind, value):
    """``value`` coerced to ``kind`` (``'int'``, ``'ints?'``, ...) for a function outside the
    spec table, raising as the spec's checks do; ``api`` is its public name (``'F.dot'``)."""
    return coerce(Api(api), Arg(name, kind), value)


def adapter_args(snake, **values):
    """The arguments an ``F`` adapter reads itself (axes it turns into shapes, flags it
    branches on) coerced by ``F.<snake>``'s spec, in the order given: a mistake raises
    before the adapter trips over it, as it would in the function's own call."""
    from . import BY_SNAKE
    spec = BY_SNAKE[snake]
    args = {a.name: a for a in spec.args}
    out = [coerce(spec, args[name], value) for name, value in values.items()]
    return out[0] if len(out) == 1 else out


def check_axis(spec, name, axis, ndim, allow_end=False):
    """Normalise a possibly negative axis; raise if it is out of range."""
    hi = ndim + 1 if allow_end else ndim
    if not -hi <= axis < hi:
        raise spec.value_error(name, f"an axis in [{-hi}, {hi})", axis,
                               why=f"the input has {ndim} dimensions")
    return axis % hi if hi else 0


def check_axes(spec, name, axes, ndim):
    out = tuple(check_axis(spec, name, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise spec.value_error(name, "distinct axes", axes)
    return out


def check_positive(spec, name, values):
    if any(v <= 0 for v in values):
        raise spec.value_error(name, "positive values", tuple(values))


def check_nonnegative(spec, name, values):
    if any(v < 0 for v in values):
        raise spec.value_error(name, "non-negative values", tuple(values))
