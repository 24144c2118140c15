"""``nnabla.ext_utils``: find extensions (backends) and make contexts for them.

Names resolve through the plugin registry (entry points), never through a
hard-coded module path.
"""
from __future__ import annotations

import importlib

from .plugins import REGISTRY
from .plugins import resolve as _resolve

__all__ = ["get_extension_context", "import_extension_module", "list_extensions",
           "list_plugins", "explain", "set_strict_fallback"]


def _check_name(ext_name):
    if not isinstance(ext_name, str):
        raise TypeError(f"get_extension_context: argument 'ext_name' is of type "
                        f"{type(ext_name).__name__}; expected str such as 'cpu'")


def import_extension_module(ext_name):
    """The module of extension ``ext_name`` (offers ``context``, ``get_devices``, ...)."""
    _check_name(ext_name)
    REGISTRY.activate(ext_name)
    ext, _ = REGISTRY.extensions[ext_name]
    return importlib.import_module(ext.module)


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
    """Names of the available extensions (backends)."""
    return sorted(REGISTRY.extensions)


def list_plugins():
    """One dict per discovered plugin: name, distribution, version, status, reason, registered."""
    rows = []
    for name, r in REGISTRY.records.items():
        rows.append({"name": name, "distribution": r.distribution, "version": r.version,
                     "status": r.status, "reason": r.reason,
                     "backends": [e.name for e in r.extensions],
                     "registered": r.registered})
    return rows


def explain(function, ctx=None, **args):
    """Describe which kernel ``function`` (type name or ``F.`` name) resolves to in ``ctx``."""
    from ._spec import BY_SNAKE, SPECS
    from ._spec.binding import bind_args
    from .context import get_current_context
    spec = SPECS.get(function) or BY_SNAKE.get(getattr(function, "__name__", function))
    if spec is None:
        raise ValueError(f"explain: unknown function {function!r}")
    return _resolve.explain(spec, bind_args(spec, args), ctx or get_current_context())


def set_strict_fallback(strict=True):
    """Make a resolution that crosses to another device family an error instead of a log line."""
    from ._graph_api import clear_memo
    _resolve.STRICT[0] = bool(strict)
    clear_memo()
