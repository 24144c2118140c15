"""Argument checks shared by the framework classes; each error names the class, the argument,
what was expected and what was given."""
from __future__ import annotations

import numbers

__all__ = ["callback", "callback_list", "count"]


def _describe(value):
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def callback(owner, name, value):
    """Return ``value`` when it is callable; raise TypeError naming ``owner`` and ``name``."""
    if not callable(value):
        raise TypeError(f"{owner}: argument '{name}' must be callable (a function, method or "
                        f"lambda); given {_describe(value)}")
    return value


def callback_list(owner, name, value):
    """Return the callbacks in ``value`` as a list.

    A single callable becomes a one-element list. A list is kept as the same object (so
    callbacks appended to it later are called, as in nnabla); a tuple is copied into a list.
    Anything else, or a non-callable element, raises TypeError.
    """
    if isinstance(value, list):
        callbacks = value
    elif isinstance(value, tuple):
        callbacks = list(value)
    else:
        return [callback(owner, name, value)]
    for index, item in enumerate(callbacks):
        callback(owner, f"{name}[{index}]", item)
    return callbacks


def count(owner, name, value, minimum):
    """Return ``int(value)`` for an integer ``value >= minimum``; raise TypeError or
    ValueError otherwise (bools are refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{owner}: argument '{name}' must be an int >= {minimum}; "
                        f"given {_describe(value)}")
    if value < minimum:
        raise ValueError(f"{owner}: argument '{name}' must be an int >= {minimum}; "
                         f"given {int(value)}")
    return int(value)
