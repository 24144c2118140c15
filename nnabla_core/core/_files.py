"""Saving proto graphs and networks (``nn.graph_def.save``)."""
from __future__ import annotations

from collections import OrderedDict

from ._executor import ProtoExecutor

_SAVE_EXTENSIONS = (".nnp", ".nntxt", ".prototxt", ".protobuf")


def _graph_proto(content, include_parameters, variable_batch_size, executors):
    for g in content:
        if hasattr(g, "networks"):         # a ProtoGraph
            if executors is not None:
                g.executors = OrderedDict(
                    (e["name"], ProtoExecutor.create_from_dict(e, g.networks[e["network"]]))
                    for e in executors)
            return g.as_proto(include_parameter=include_parameters,
                              variable_batch_size=variable_batch_size), g.get_parameters()
        if hasattr(g, "owner"):            # a ProtoNetwork
            owner = g.owner()
            if executors is not None:
                for e in executors:
                    if e["network"] != g.name:
                        raise ValueError(f"nn.graph_def.save: executor {e['name']!r} names "
                                         f"network {e['network']!r}; the network saved is "
                                         f"{g.name!r}")
                owner.executors = OrderedDict(
                    (e["name"], ProtoExecutor.create_from_dict(e, g)) for e in executors)
            return owner.as_proto(include_parameter=include_parameters, networks=[g],
                                  variable_batch_size=variable_batch_size), \
                owner.get_parameters()
    raise ValueError(f"nn.graph_def.save: 'content' must hold a ProtoGraph or a "
                     f"ProtoNetwork; given {[type(g).__name__ for g in content]}")


def save_content(filename, content, include_parameters=False, variable_batch_size=True,
                 extension=".nnp", executors=None):
    """What ``nn.graph_def.save`` does (see there); ``content`` is a list."""
    from ..utils import _nnp_archive, _nnp_parameters
    from ..utils.nnp_format import nnp_version

    ext = _nnp_archive.extension_of(filename, extension)
    if ext not in _SAVE_EXTENSIONS:
        raise ValueError(f"nn.graph_def.save: unsupported extension {ext!r}; expected one "
                         f"of {', '.join(_SAVE_EXTENSIONS)}")
    proto, params = _graph_proto(content, include_parameters and ext != ".nnp",
                                 variable_batch_size, executors)
    if ext == ".protobuf":
        _nnp_archive.write_target(filename, proto.SerializeToString(), binary=True)
    elif ext != ".nnp":
        _nnp_archive.write_target(filename, _nnp_archive.to_text(proto), binary=False)
    else:
        _nnp_archive.write_archive(filename, [
            ("nnp_version.txt", f"{nnp_version()}\n"),
            ("network.nntxt", _nnp_archive.to_text(proto)),
            ("parameter.h5", _nnp_parameters.h5_bytes(params))])
