"""The records plugins return from their hooks (plain data)."""
from __future__ import annotations

from dataclasses import dataclass, field
from ..array_family import ArrayFamily  # noqa: F401  (the array_classes hook returns these)


@dataclass(frozen=True)
class PluginInfo:
    name: str
    version: str
    api_version: tuple


@dataclass(frozen=True)
class Extension:
    """A backend: ``name`` as in a context string (``'cpu'``, ``'cuda'``).

    ``family`` is the array family its kernels take; ``array_classes`` the
    array class names that live in that family (the first is the default);
    ``module`` the import path of the extension module (``context()``,
    ``get_devices()``, ``device_synchronize()``, ``clear_memory_cache()``);
    ``depends`` the backends it builds on (cudnn -> cuda -> cpu): activating this
    backend activates them too. It does not make them fallbacks: which backends are
    tried, and in which order, comes only from the context's backend list.
    """
    name: str
    family: str
    array_classes: tuple
    module: str
    depends: tuple = ()


@dataclass(frozen=True)
class KernelSet:
    backend: str
    type_configs: tuple
    load: str
    overrides: bool = False    # True: for another plugin's backend, on top of its table


@dataclass(frozen=True)
class SolverKernelSet:
    backend: str
    load: str
    overrides: bool = False    # True: for another plugin's backend, on top of its table


@dataclass(frozen=True)
class CommunicatorSet:
    backend: str
    load: str
    overrides: bool = False    # True: for another plugin's backend, on top of its table


@dataclass
class PluginRecord:
    """What the core knows about one plugin (shown by ``nnabla_cli plugins``)."""
    entry_point: str
    distribution: str = "?"
    version: str = "?"
    status: str = "discovered"       # discovered | active | skipped | failed
    reason: str = ""
    module: object = None
    info: PluginInfo | None = None
    extensions: list = field(default_factory=list)
    registered: dict = field(default_factory=dict)
