"""Plugin discovery, isolation and the registry of what plugins provide.

Discovery (at ``import nnabla``) enumerates the ``nnabla.plugins`` entry points,
imports each named module, checks its API version and reads its extension
descriptions. Activation (on first use of a backend) calls the remaining hooks
and fills plain dicts, so lookups afterwards cost one dict access. Every step
of a plugin runs under :func:`_isolated`: a failure skips that plugin with one
warning and records the reason.
"""
from __future__ import annotations

import importlib
import os
import traceback
import warnings
from importlib import metadata

import pluggy

from . import hookspecs
from .types import PluginRecord

PLUGIN_API_VERSION = (2, 0)   # 2.0: the core owns Kernel, ArrayFamily and solver Rule
ENTRY_POINT_GROUP = "nnabla.plugins"
DISABLE_ENV = "NNABLA_DISABLE_PLUGIN_AUTOLOAD"
ALLOW_ENV = "NNABLA_PLUGINS"


class NnablaPluginWarning(UserWarning):
    """A plugin was skipped; the message names it, its version and the reason."""


class PluginError(RuntimeError):
    pass


class Registry:
    """Everything registered by active plugins, in plain dicts."""

    def __init__(self):
        self.records = {}          # entry-point name -> PluginRecord
        self.extensions = {}       # backend name -> (Extension, PluginRecord)
        self.families = {}         # array family name -> ArrayFamily
        self.kernels = {}          # (backend, type_config) -> {type name: kernel class}
        self.solver_rules = {}     # backend -> {solver name: rule}
        self.communicators = {}    # backend -> {name: factory}
        self.active = set()        # activated backend names
        self.version = 0           # bumped whenever tables change (invalidates memos)

    # -- discovery -------------------------------------------------------------------------
    def discover(self):
        if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
            return
        allow = {n.strip() for n in os.environ.get(ALLOW_ENV, "").split(",") if n.strip()}
        for ep in _entry_points():
            if allow and ep.name not in allow:
                continue
            dist = getattr(ep, "dist", None)
            record = PluginRecord(entry_point=ep.name,
                                  distribution=getattr(dist, "name", "?") or "?",
                                  version=getattr(dist, "version", "?") or "?")
            self.records[ep.name] = record
            self._isolated(record, lambda r=record, e=ep: self._load(r, e.load()))

    def register(self, obj, name=None):
        """Register a plugin object (module or instance with hook implementations) in-process."""
        name = name or getattr(obj, "__name__", type(obj).__name__)
        record = PluginRecord(entry_point=name, distribution="(in-process)")
        self.records[name] = record
        self._isolated(record, lambda: self._load(record, obj))
        return record

    def _load(self, record, module):
        pm = pluggy.PluginManager("nnabla")
        pm.add_hookspecs(hookspecs)
        pm.register(module, name=record.entry_point)
        record.module = pm
        infos = pm.hook.nnabla_plugin_info()
        if not infos:
            raise PluginError("it does not implement the required hook nnabla_plugin_info")
        info = record.info = infos[0]
        if record.distribution == "(in-process)":
            record.version = info.version
        major, minor = tuple(info.api_version)[:2]
        if major != PLUGIN_API_VERSION[0] or minor > PLUGIN_API_VERSION[1]:
            raise PluginError(f"needs core API {major}.{minor}, this core offers "
                              f"{PLUGIN_API_VERSION[0]}.{PLUGIN_API_VERSION[1]}")
        for exts in pm.hook.nnabla_extensions():
            for ext in exts:
                if ext.name in self.extensions:
                    other = self.extensions[ext.name][1]
                    raise PluginError(f"backend '{ext.name}' is already provided by "
                                      f"plugin '{other.entry_point}'")
                record.extensions.append(ext)
        for ext in record.extensions:
            self.extensions[ext.name] = (ext, record)
        record.status = "discovered"

    def _isolated(self, record, step, status="skipped"):
        try:
            step()
            return True
        except Exception as e:  # noqa: BLE001 - a plugin must never break nnabla
            for ext in record.extensions:
                self.extensions.pop(ext.name, None)
            record.status = status
            record.reason = f"{type(e).__name__}: {e}"
            record.traceback = traceback.format_exc()
            warnings.warn(f"skipped plugin '{record.entry_point}' ({record.distribution} "
                          f"{record.version}): {record.reason}", NnablaPluginWarning,
                          stacklevel=3)
            return False

    # -- activation ------------------------------------------------------------------------
    def activate(self, backend):
        """Make ``backend`` (and the backends it builds on) usable; raise if it cannot be."""
        if backend in self.active:
            return
        if backend not in self.extensions:
            raise self.unknown_backend(backend)
        ext, record = self.extensions[backend]
        if record.status != "active":
            ok = self._isolated(record, lambda: self._activate_record(record), "failed")
            if not ok:
                raise self.unknown_backend(backend)
        self.active.add(backend)
        for dep in ext.depends:
            self.activate(dep)

    def _activate_record(self, record):
        from nnabla._spec import SPECS
        hook = record.module.hook
        families = [f for fs in hook.nnabla_array_classes() for f in fs]
        kernels, rules, comms = {}, {}, {}
        for sets in hook.nnabla_kernels():
            for ks in sets:
                table = _load_attr(ks.load)
                unknown = sorted(set(table) - set(SPECS))
                if unknown:
                    raise PluginError(f"kernel table {ks.load} names unknown functions {unknown}")
                for tc in ks.type_configs:
                    if tc not in ("float", "half"):
                        raise PluginError(f"kernel set {ks.load}: unknown type config {tc!r}")
                    kernels.setdefault((ks.backend, tc), {}).update(table)
        for sets in hook.nnabla_solver_kernels():
            for ss in sets:
                rules.setdefault(ss.backend, {}).update(_load_attr(ss.load))
        for sets in hook.nnabla_communicators():
            for cs in sets:
                comms.setdefault(cs.backend, {}).update(_load_attr(cs.load))
        # Commit only when every hook succeeded, so a failure leaves no half state.
        self.families.update({f.name: f for f in families})
        for key, table in kernels.items():
            self.kernels.setdefault(key, {}).update(table)
        for key, table in rules.items():
            self.solver_rules.setdefault(key, {}).update(table)
        for key, table in comms.items():
            self.communicators.setdefault(key, {}).update(table)
        record.registered = {
            "backends": [e.name for e in record.extensions],
            "array_families": [f.name for f in families],
            "kernels": {f"{b}:{tc}": len(t) for (b, tc), t in kernels.items()},
            "solvers": {b: sorted(t) for b, t in rules.items()},
            "communicators": {b: sorted(t) for b, t in comms.items()},
        }
        record.status = "active"
        self.version += 1

    def unknown_backend(self, backend):
        failed = [f"{r.entry_point} ({r.status}: {r.reason})" for r in self.records.values()
                  if r.status in ("failed", "skipped")]
        msg = (f"backend '{backend}' is not available; installed backends: "
               f"{sorted(self.extensions)}")
        if failed:
            msg += f"; plugins that failed to load: {', '.join(failed)}"
        msg += f". Install the plugin providing it (e.g. pip install nnabla-ext-{backend})."
        return ValueError(msg)


def _load_attr(spec):
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _entry_points():
    eps = metadata.entry_points()
    if hasattr(eps, "select"):
        return list(eps.select(group=ENTRY_POINT_GROUP))
    return list(eps.get(ENTRY_POINT_GROUP, ()))
