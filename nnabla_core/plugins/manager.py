"""Plugin discovery, isolation and the registry of what plugins provide.

Discovery (at the end of ``import nnabla``) enumerates the ``nnabla.plugins`` entry points,
imports each named module, checks its API version and reads its extension descriptions.
Activation (on first use of a backend) calls the remaining hooks and fills plain dicts, so
lookups afterwards cost one dict access. Every step of a plugin runs under
:meth:`Registry._isolated`: whatever it raises (``sys.exit()`` included; only
``KeyboardInterrupt`` and ``GeneratorExit`` pass through) marks the plugin skipped or failed,
gives one warning and records the reason.

A plugin registers kernels, solver rules and communicators only for the backends it declares
in ``nnabla_extensions()``; a set for another plugin's backend must say ``overrides=True``.
A backend's table is the owning plugin's table with the overriding plugins' tables on top (in
entry-point name order when several override one backend), so the order in which plugins
register or activate never decides which kernel runs. Priority among backends comes only
from the context's backend list.
"""
from __future__ import annotations

import importlib
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Mapping
from importlib import metadata

import pluggy

from ..array_family import register_family
from . import hookspecs
from .types import (ArrayFamily, CommunicatorSet, Extension, KernelSet, PluginInfo,
                    PluginRecord, SolverKernelSet)

PLUGIN_API_VERSION = (2, 0)   # 2.0: the core owns Kernel, ArrayFamily and solver Rule
ENTRY_POINT_GROUP = "nnabla.plugins"
DISABLE_ENV = "NNABLA_DISABLE_PLUGIN_AUTOLOAD"
ALLOW_ENV = "NNABLA_PLUGINS"
TYPE_CONFIGS = ("float", "half")
# hook -> (the set type it returns, the Registry table it fills)
TABLE_HOOKS = {"nnabla_kernels": (KernelSet, "kernels"),
               "nnabla_solver_kernels": (SolverKernelSet, "solver_rules"),
               "nnabla_communicators": (CommunicatorSet, "communicators")}
_PASS_THROUGH = (KeyboardInterrupt, GeneratorExit)   # the user's and the interpreter's
_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_WARNING = {"skipped": "skipped plugin", "failed": "failed to activate plugin"}
_OUTCOME = {"skipped": "was skipped", "failed": "failed to activate"}
logger = logging.getLogger("nnabla")


class NnablaPluginWarning(UserWarning):
    """A plugin was skipped or failed; the message names it, its version and the reason."""


class PluginError(RuntimeError):
    """A plugin broke the protocol; the message names the hook and the key."""


class Registry:
    """Everything registered by active plugins, in plain dicts."""

    __slots__ = ("records", "extensions", "families", "kernels", "solver_rules",
                 "communicators", "active", "version", "excluded", "autoload_disabled",
                 "_layers")

    def __init__(self):
        self.records = {}          # entry-point name -> PluginRecord
        self.extensions = {}       # backend name -> (Extension, PluginRecord)
        self.families = {}         # array family name -> ArrayFamily
        self.kernels = {}          # (backend, type_config) -> {type name: kernel class}
        self.solver_rules = {}     # backend -> {solver name: rule}
        self.communicators = {}    # backend -> {name: factory}
        self.active = set()        # activated backend names
        self.version = 0           # bumped whenever tables change (invalidates memos)
        self.excluded = {}         # entry-point name -> distribution, left out by NNABLA_PLUGINS
        self.autoload_disabled = False
        # table -> key -> {entry point: (overrides, table)}; merged into the tables above
        self._layers = {table: {} for _, table in TABLE_HOOKS.values()}

    # -- discovery -------------------------------------------------------------------------
    def discover(self):
        """Load the ``nnabla.plugins`` entry points (see ``NNABLA_PLUGINS`` and
        ``NNABLA_DISABLE_PLUGIN_AUTOLOAD``); a broken plugin is skipped, never raised."""
        if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
            self.autoload_disabled = True
            return
        allow = {n.strip() for n in os.environ.get(ALLOW_ENV, "").split(",") if n.strip()}
        try:
            entry_points = _entry_points()
        except Exception as e:  # noqa: BLE001 - broken package metadata must not break import
            _warn(f"cannot list the '{ENTRY_POINT_GROUP}' entry points: {type(e).__name__}: {e}")
            return
        for ep in entry_points:
            dist = getattr(ep, "dist", None)
            distribution = str(getattr(dist, "name", None) or "?")
            if allow and ep.name not in allow:
                self.excluded[ep.name] = distribution
                continue
            record = PluginRecord(entry_point=ep.name, distribution=distribution,
                                  version=str(getattr(dist, "version", None) or "?"))
            self.records[ep.name] = record
            self._isolated(record, lambda r=record, e=ep: self._load(r, e.load()))

    def register(self, obj, name=None):
        """Register a plugin object (module or instance with hook implementations) in-process."""
        name = name or getattr(obj, "__name__", type(obj).__name__)
        record = PluginRecord(entry_point=name, distribution="(in-process)")
        self.records[name] = record
        self._isolated(record, lambda: self._load(record, obj))
        return record

    def _load(self, record, plugin):
        pm = pluggy.PluginManager("nnabla")
        pm.add_hookspecs(hookspecs)
        pm.register(plugin, name=record.entry_point)
        pm.check_pending()      # a misspelt hook (nnabla_kernel) is an error, not ignored
        record.module = pm
        record.info = info = _plugin_info(pm)
        if record.distribution == "(in-process)":
            record.version = str(info.version)
        _check_api(info.api_version)
        extensions = _items(pm.hook.nnabla_extensions(), Extension, "nnabla_extensions")
        for ext in extensions:
            self._check_extension(ext)
        record.extensions = extensions
        for ext in extensions:
            self.extensions[ext.name] = (ext, record)
        record.status = "discovered"

    def _check_extension(self, ext):
        if not isinstance(ext.name, str) or not ext.name:
            raise PluginError(f"nnabla_extensions: backend name {ext.name!r} is not a "
                              "non-empty str")
        if not isinstance(ext.depends, (tuple, list)) or not all(
                isinstance(d, str) for d in ext.depends):
            raise PluginError(f"nnabla_extensions: backend '{ext.name}' has depends="
                              f"{ext.depends!r}; expected a tuple of backend names")
        if ext.name in self.extensions:
            other = self.extensions[ext.name][1]
            raise PluginError(f"backend '{ext.name}' is already provided by plugin "
                              f"{_describe(other)}")

    def _isolated(self, record, step, status="skipped"):
        """Run one step of a plugin; if it raises, mark the plugin ``status``, warn once and
        return False."""
        try:
            step()
            return True
        except _PASS_THROUGH:
            raise
        except BaseException as e:  # noqa: BLE001 - even sys.exit() in a plugin must not end nnabla
            self._drop(record, status, e)
            return False

    def _drop(self, record, status, error):
        for ext in record.extensions:
            if self.extensions.get(ext.name, (None, None))[1] is record:
                del self.extensions[ext.name]
        record.status = status
        record.reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        record.traceback = traceback.format_exc()
        _warn(f"{_WARNING[status]} {_describe(record)}: {record.reason}")

    # -- activation ------------------------------------------------------------------------
    def activate(self, backend):
        """Make ``backend`` (and the backends it builds on) usable; raise if it cannot be.

        Raises:
            ValueError: no active plugin provides ``backend``; the message says why.
        """
        if backend in self.active:
            return
        self._activate_addons()
        if backend not in self.extensions:
            raise self.unknown_backend(backend)
        ext, record = self.extensions[backend]
        if record.status != "active":
            if not self._isolated(record, lambda: self._activate_record(record), "failed"):
                raise self.unknown_backend(backend)
        self.active.add(backend)
        for dep in ext.depends:
            self.activate(dep)

    def _activate_addons(self):
        """Activate the add-ons with the first backend: plugins that declare no backend of
        their own and only add to other plugins' (``overrides=True``), e.g. a communicator
        for the ``cuda`` backend. Their activation hooks must therefore be cheap."""
        for record in list(self.records.values()):
            if record.status == "discovered" and not record.extensions:
                self._isolated(record, lambda r=record: self._activate_record(r), "failed")

    def activate_all(self):
        """Activate every discovered backend; failures are recorded and warned, not raised."""
        for backend in list(self.extensions):   # a failing plugin removes its backends
            try:
                self.activate(backend)
            except ValueError:
                pass

    def _activate_record(self, record):
        hook = record.module.hook
        families = _items(hook.nnabla_array_classes(), ArrayFamily, "nnabla_array_classes")
        layers = {TABLE_HOOKS[name][1]: self._load_sets(record, name) for name in TABLE_HOOKS}
        # Commit only when every hook succeeded, so a failure leaves no half state.
        self.families.update({f.name: f for f in families})
        for family in families:
            register_family(family)         # the core's arrays find their families there
        for table, by_key in layers.items():
            for key, layer in by_key.items():
                self._layers[table].setdefault(key, {})[record.entry_point] = layer
                self._merge(table, key)
        record.registered = _summary(record, families, layers)
        record.status = "active"
        self.version += 1

    def _load_sets(self, record, hook):
        """``{key: (overrides, table)}`` from one table hook of ``record``'s plugin."""
        cls = TABLE_HOOKS[hook][0]
        layers = {}
        for item in _items(getattr(record.module.hook, hook)(), cls, hook):
            overrides = self._check_backend(record, item, hook)
            table = _load_table(item.load, hook)
            for key in _keys(item, table, hook):
                layers.setdefault(key, (overrides, {}))[1].update(table)
        return layers

    def _check_backend(self, record, item, hook):
        """Whether ``item`` overrides another plugin's backend; raise if it does undeclared."""
        if item.backend in {e.name for e in record.extensions}:
            return False
        owner = self.extensions.get(item.backend, (None, None))[1]
        owned_by = f"plugin {_describe(owner)}" if owner else "no plugin"
        if not item.overrides:
            raise PluginError(f"{hook}: {item.load!r} is for backend '{item.backend}', which "
                              f"this plugin does not declare (it belongs to {owned_by}); set "
                              f"overrides=True to override another plugin's backend")
        # Kernels and solver rules decide the numbers: say so. A communicator add-on (e.g.
        # NCCL for cuda) is the expected way to extend a backend: debug level, so it is not
        # printed at every start (``nnabla_cli plugins`` lists every override).
        level = logging.DEBUG if hook == "nnabla_communicators" else logging.INFO
        logger.log(level, "plugin %s overrides backend '%s' of %s with %s", _describe(record),
                   item.backend, owned_by, item.load)
        return True

    def _merge(self, table, key):
        """Rebuild one merged table: the owning plugin's first, then overrides by name."""
        layers = self._layers[table][key]
        merged = {}
        for name in sorted(layers, key=lambda n: (layers[n][0], n)):
            merged.update(layers[name][1])
        getattr(self, table)[key] = merged

    # -- messages --------------------------------------------------------------------------
    def unknown_backend(self, backend):
        """The ``ValueError`` for a backend no active plugin provides, saying why."""
        return ValueError(f"backend '{backend}' is not available (installed backends: "
                          f"{sorted(self.extensions)}); {self._why_unavailable(backend)}")

    def _why_unavailable(self, backend):
        broken = [r for r in self.records.values() if r.status in _OUTCOME]
        providers = [r for r in broken if backend in _names(r)]
        if providers:
            return "; ".join(f"plugin {_describe(r)} provides it but {_OUTCOME[r.status]}: "
                             f"{r.reason}" for r in providers)
        if backend in self.excluded:
            return (f"plugin '{backend}' ({self.excluded[backend]}) is installed but not "
                    f"loaded: {ALLOW_ENV}={os.environ.get(ALLOW_ENV, '')!r} does not list it")
        if self.autoload_disabled:
            return (f"plugins are not loaded because {DISABLE_ENV} is set; unset it or "
                    "register the plugin with nnabla.plugins.register(module)")
        hint = f"install the plugin providing it (e.g. pip install nnabla-ext-{backend})"
        if broken:
            failed = ", ".join(f"{_describe(r)}: {r.reason}" for r in broken)
            hint = f"plugins that failed to load: {failed}; or {hint}"
        return hint


def _describe(record):
    return f"'{record.entry_point}' ({record.distribution} {record.version})"


def _names(record):
    """The backend names a plugin provides or, when it failed early, is likely to."""
    names = {e.name for e in record.extensions} | {record.entry_point}
    return names | {getattr(record.info, "name", None)}


def _plugin_info(pm):
    infos = pm.hook.nnabla_plugin_info()
    if not infos:
        raise PluginError("the required hook nnabla_plugin_info is missing or returned None")
    if not isinstance(infos[0], PluginInfo):
        raise PluginError(f"nnabla_plugin_info returned {type(infos[0]).__name__}; "
                          "expected PluginInfo")
    return infos[0]


def _check_api(api_version):
    major, minor = tuple(api_version)[:2]
    if major != PLUGIN_API_VERSION[0] or minor > PLUGIN_API_VERSION[1]:
        raise PluginError(f"needs core API {major}.{minor}, this core offers "
                          f"{PLUGIN_API_VERSION[0]}.{PLUGIN_API_VERSION[1]}")


def _items(results, cls, hook):
    """The items of a hook's lists (one list per implementation), each checked to be a
    ``cls``."""
    items = [item for result in results for item in result]
    for item in items:
        if not isinstance(item, cls):
            raise PluginError(f"{hook} returned {type(item).__name__} {item!r}; "
                              f"expected {cls.__name__}")
    return items


def _keys(item, table, hook):
    """The registry keys a set fills, after checking its function names and type configs."""
    if not isinstance(item, KernelSet):
        return [item.backend]
    from .._spec import SPECS
    unknown = sorted(set(table) - set(SPECS))
    if unknown:
        raise PluginError(f"{hook}: kernel table {item.load!r} names unknown functions "
                          f"{unknown}")
    from ..kernel import Kernel
    wrong = sorted(name for name, cls in table.items()
                   if not (isinstance(cls, type) and issubclass(cls, Kernel)))
    if wrong:
        raise PluginError(f"{hook}: kernel table {item.load!r} has entries that are not "
                          f"nnabla.kernel.Kernel subclasses: {wrong}")
    for tc in item.type_configs:
        if tc not in TYPE_CONFIGS:
            raise PluginError(f"{hook}: kernel set {item.load!r} has unknown type config "
                              f"{tc!r}; expected one of {TYPE_CONFIGS}")
    return [(item.backend, tc) for tc in item.type_configs]


def _load_table(spec, hook):
    """The dict named by ``'module:attribute'``; a bad name raises naming hook and string."""
    module, _, attr = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if not module or not attr:
        raise PluginError(f"{hook}: load={spec!r} is not 'module:attribute'")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise PluginError(f"{hook}: cannot load {spec!r}: {type(e).__name__}: {e}") from e
    if not isinstance(obj, Mapping):
        raise PluginError(f"{hook}: {spec!r} is a {type(obj).__name__}; expected a dict")
    return dict(obj)


def _summary(record, families, layers):
    """What a plugin registered, for ``nnabla_cli plugins``."""
    overridden = {k[0] if isinstance(k, tuple) else k
                  for by_key in layers.values() for k, (overrides, _) in by_key.items()
                  if overrides}
    return {
        "backends": [e.name for e in record.extensions],
        "array_families": [f.name for f in families],
        "kernels": {f"{b}:{tc}": len(t) for (b, tc), (_, t) in layers["kernels"].items()},
        "solvers": {b: sorted(t) for b, (_, t) in layers["solver_rules"].items()},
        "communicators": {b: sorted(t) for b, (_, t) in layers["communicators"].items()},
        "overrides": sorted(overridden),
    }


def _warn(message):
    """Warn at the first caller outside nnabla (the user's line, not the core's)."""
    if sys.version_info >= (3, 12):
        warnings.warn(message, NnablaPluginWarning, skip_file_prefixes=(_CORE_DIR,))
    else:
        warnings.warn(message, NnablaPluginWarning, stacklevel=_stacklevel_outside_core())


def _stacklevel_outside_core():
    # Level 1 is _warn; like `warnings`, importlib's own frames are not counted.
    frame, level = sys._getframe(2), 2
    while frame is not None and (_is_importlib(frame)
                                 or frame.f_code.co_filename.startswith(_CORE_DIR)):
        frame = frame.f_back
        if frame is not None and not _is_importlib(frame):
            level += 1
    return level


def _is_importlib(frame):
    filename = frame.f_code.co_filename
    return "importlib" in filename and "_bootstrap" in filename


def _entry_points():
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=ENTRY_POINT_GROUP))
    return list(eps.get(ENTRY_POINT_GROUP, ()))
