"""Access to :mod:`nnabla.utils.converter` for the subcommands that need its file converters.

The converters are built separately; a subcommand that needs one that is not there yet fails
with :class:`ConverterUnavailable`, naming the missing ``nnabla.utils.converter`` attribute.
"""
from __future__ import annotations

import importlib


class ConverterUnavailable(NotImplementedError):
    """A converter the command needs is not available (yet) in nnabla.utils.converter."""


def converter_function(name, command, module="nnabla.utils.converter"):
    """``module.name``, or ConverterUnavailable naming it and the command that needs it."""
    try:
        found = getattr(importlib.import_module(module), name, None)
    except ImportError as error:
        raise ConverterUnavailable(f"nnabla_cli {command}: {module} cannot be imported "
                                   f"({error})") from None
    if found is None:
        raise ConverterUnavailable(f"nnabla_cli {command}: not available yet: it needs "
                                   f"{module}.{name}, which this installation does not have")
    return found
