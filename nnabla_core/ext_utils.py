"""``nnabla.ext_utils``: find extensions (backends) and make contexts for them.

Names resolve through the plugin registry (entry points), never through a
hard-coded module path.
"""
from __future__ import annotations

import importlib

from ._spec import BY_SNAKE, SPECS
from ._spec.binding import bind_args
from ._state import STATE, clear_caches
from .context import get_current_context
from .plugins import REGISTRY
from .plugins import resolve as _resolve
from .plugins.manager import ALLOW_ENV

__all__ = ["get_extension_context", "import_extension_module", "list_extensions",
           "list_plugins", "explain", "set_strict_fallback"]


def _check_name(ext_name):
    if not isinstance(ext_name, str):
        raise TypeError(f"get_extension_context: argument 'ext_name' is of type "
                        f"{type(ext_name).__name__}; expected str such as 'cpu'")


def import_extension_module(ext_name):
    """The module of extension ``ext_name`` (offers ``context``, ``get_devices``, ...).

    Raises:
        ValueError: no active plugin provides ``ext_name``; the message says why (the
            plugin failed or was skipped, ``NNABLA_PLUGINS`` leaves it out, or none is
            installed).
        ImportError: the plugin names an extension module that cannot be imported.
    """
    _check_name(ext_name)
    REGISTRY.activate(ext_name)
    ext, record = REGISTRY.extensions[ext_name]
    try:
        return importlib.import_module(ext.module)
    except ImportError as e:
        raise ImportError(f"backend '{ext_name}' of plugin '{record.entry_point}' "
                          f"({record.distribution} {record.version}): extension module "
                          f"{ext.module!r} cannot be imported: {e}") from e


def get_extension_context(ext_name, **kw):
    """A context for extension ``ext_name``.

    Args:
        ext_name (str): ``'cpu'``, ``'cuda'``, ``'cudnn'`` or a third party's backend.
        **kw: ``device_id`` (str or int), ``type_config`` (``'float'`` or ``'half'``).

    Example:
        >>> from nnabla.ext_utils import get_extension_context
        >>> get_extension_context('cpu', type_config='half').backend
        ['cpu:half', 'cpu:float']
    """
    type_config = kw.get("type_config", "float")
    if type_config not in ("float", "half", "mixed_half"):
        raise ValueError(f"get_extension_context: argument 'type_config' is {type_config!r}; "
                         "expected 'float' or 'half'")
    return import_extension_module(ext_name).context(**kw)


def list_extensions():
    """Names of the available extensions (backends), sorted."""
    return sorted(REGISTRY.extensions)


def list_plugins():
    """One dict per plugin found: name, distribution, version, status, reason, backends,
    registered.

    ``status`` is ``discovered``, ``active``, ``skipped`` (at discovery), ``failed`` (at
    activation) or ``excluded`` (installed, but not listed in ``NNABLA_PLUGINS``). Never
    raises, whatever a plugin did.
    """
    rows = [_plugin_row(name, r.distribution, r.version, r.status, r.reason,
                        [e.name for e in r.extensions], r.registered)
            for name, r in list(REGISTRY.records.items())]
    rows += [_plugin_row(name, dist, "?", "excluded", f"not listed in {ALLOW_ENV}", [], {})
             for name, dist in list(REGISTRY.excluded.items())]
    return rows


def _plugin_row(name, distribution, version, status, reason, backends, registered):
    return {"name": str(name), "distribution": str(distribution), "version": str(version),
            "status": str(status), "reason": str(reason or ""),
            "backends": [str(b) for b in backends], "registered": dict(registered or {})}


def explain(function, ctx=None, **args):
    """Describe which kernel ``function`` (type name or ``F.`` function) resolves to in ``ctx``.

    One line per backend of the context: its kernel and whether it accepts ``args``; the
    winner is marked ``-> selected``, with a note when it crosses to another array family.

    Args:
        function (str or callable): ``'Affine'``, ``'affine'`` or ``F.affine``.
        ctx (Context): default: the current context.
        **args: the function's arguments, by nnabla's names.

    Raises:
        ValueError: ``function`` is not a known function.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.ext_utils import explain
        >>> print(explain('ReLU', nn.Context(['cpu:float'])).splitlines()[1])  # doctest: +ELLIPSIS
          cpu:float: ...ReLU accepts -> selected
    """
    spec = SPECS.get(function) or BY_SNAKE.get(getattr(function, "__name__", function))
    if spec is None:
        raise ValueError(f"explain: unknown function {function!r}")
    return _resolve.explain(spec, bind_args(spec, args), ctx or get_current_context())


def set_strict_fallback(strict=True):
    """Make a resolution that crosses to another device family an error instead of a log line."""
    STATE.strict_fallback = bool(strict)
    clear_caches()
