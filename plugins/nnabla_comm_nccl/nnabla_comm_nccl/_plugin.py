"""The plugin hooks (entry point ``nnabla.plugins: nccl``): an add-on with no backend.

Activated with the first backend (see ``nnabla.plugins``), so its hooks import nothing
heavy: the communicator table module imports CuPy and NCCL only when a communicator is made.
"""
from __future__ import annotations

from nnabla.plugins import CommunicatorSet, PluginInfo, hookimpl

from . import API_VERSION, __version__

BACKENDS = ("cuda", "cudnn")


@hookimpl
def nnabla_plugin_info():
    return PluginInfo(name="nccl", version=__version__, api_version=API_VERSION)


@hookimpl
def nnabla_communicators():
    return [CommunicatorSet(backend=b, load="nnabla_comm_nccl.communicator:COMMUNICATORS",
                            overrides=True) for b in BACKENDS]
