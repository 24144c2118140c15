"""The plugin hook specifications: the whole contract between core and plugins.

A plugin is a module named by an entry point in the group ``nnabla.plugins``;
it implements some of these hooks with ``@nnabla.plugins.hookimpl`` (a misspelt
``nnabla_`` hook is an error). The core calls each hook once: ``nnabla_plugin_info`` and
``nnabla_extensions`` at discovery (``import nnabla``), the others when the plugin is
activated (on first use of one of its backends); it stores the results in plain dicts.
Whatever a hook raises (``sys.exit()`` included) skips the plugin (at discovery) or marks
it failed (at activation), with one warning and the reason recorded.
"""
from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("nnabla")
hookimpl = pluggy.HookimplMarker("nnabla")


@hookspec
def nnabla_plugin_info():
    """Required. Return a :class:`nnabla.plugins.PluginInfo` ``(name, version, api_version)``.

    Called at discovery, before anything else. A plugin whose ``api_version``
    has another major, or a newer minor, than the core's ``PLUGIN_API_VERSION``
    is skipped. Must be fast: import nothing heavy.
    """


@hookspec
def nnabla_extensions():
    """Return a ``list[nnabla.plugins.Extension]``: backend name, array family name,
    array class names, the module offering ``context``/``get_devices``/..., and the
    backends it builds on. Called at discovery; must be fast."""


@hookspec
def nnabla_array_classes():
    """Return a ``list[nnabla.array_family.ArrayFamily]``: for each array family an
    ``Extension`` of this plugin names, how the core allocates, converts, copies and
    accumulates its arrays, and its ``xp`` namespace (given to kernels). Called at
    activation; may import the device library."""


@hookspec
def nnabla_kernels():
    """Return a ``list[nnabla.plugins.KernelSet]`` ``(backend, type_configs, load)``;
    ``load`` is ``'module:attr'`` naming a ``dict[str, type[nnabla.kernel.Kernel]]``
    (function type name -> kernel class; every value must subclass ``Kernel``).
    Called at activation; the table module is imported then.

    ``backend`` must be one this plugin declares in ``nnabla_extensions``; to replace
    kernels of another plugin's backend, set ``overrides=True``: once this plugin is
    active, those entries take precedence over that plugin's table, whatever the order
    the two were activated in."""


@hookspec
def nnabla_solver_kernels():
    """Return a ``list[nnabla.plugins.SolverKernelSet]`` ``(backend, load)``; ``load``
    names a ``dict[str, nnabla.solver_rule.Rule]`` (solver type name -> rule). Called at
    activation. ``backend`` and ``overrides`` as for ``nnabla_kernels``."""


@hookspec
def nnabla_communicators():
    """Return a ``list[nnabla.plugins.CommunicatorSet]`` ``(backend, load)``; ``load``
    names a ``dict[str, callable]`` (communicator name -> factory taking a context).
    Called at activation. ``backend`` and ``overrides`` as for ``nnabla_kernels``."""
