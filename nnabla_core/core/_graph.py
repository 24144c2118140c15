"""Proto graphs: groups of proto networks sharing a parameter scope (what an ``.nnp`` holds)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import parameter as _parameter
from ._executor import ProtoExecutor
from ._files import save_content
from ._network import GRAPH_MEMBERS, ProtoNetwork


class ProtoGraph:
    """A group of proto networks sharing one parameter scope (what an ``.nnp`` holds).

    ``g.networks[name]``, ``g[name]`` and ``g.<name>`` give a network; ``g(*inputs)`` and
    ``g.inputs``/``g.outputs``/... use the default (first) network.

    Args:
        networks (OrderedDict, optional): name -> :class:`ProtoNetwork`.
        parameter_scope (OrderedDict, optional): the parameters (a new scope if None).
    """

    def __init__(self, networks=None, parameter_scope=None):
        self.networks = networks if networks is not None else OrderedDict()
        self.executors = OrderedDict()
        self.parameter_scope = parameter_scope if parameter_scope is not None else OrderedDict()
        self.global_variables = {}

    def __contains__(self, item):
        return item in self.__dict__

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        if item in GRAPH_MEMBERS:
            return self.default_graph()[item]
        networks = self.__dict__.get("networks", {})
        if item in networks:
            return networks[item]
        if item in self.__dict__:
            return self.__dict__[item]
        raise AttributeError(f"ProtoGraph has no network or attribute {item!r} (networks: "
                             f"{list(networks)})")

    def __getitem__(self, item):
        return self.__getattr__(item)

    def __setitem__(self, key, value):
        if isinstance(value, ProtoNetwork):
            self.networks[key] = value
        else:
            self.__dict__[key] = value

    def get(self, key, value=None):
        return self.__dict__.get(key, value)

    def __repr__(self):
        return f"ProtoGraph(networks={list(self.networks)})"

    def get_parameters(self, grad_only=False):
        """The parameters of this graph's scope (name -> Variable)."""
        with _parameter.parameter_scope("", self.parameter_scope):
            return _parameter.get_parameters(grad_only=grad_only)

    def set_parameter(self, key, param):
        with _parameter.parameter_scope("", self.parameter_scope):
            _parameter.set_parameter(key, param)

    def set_parameters(self, params):
        for key, param in params.items():
            self.set_parameter(key, param)

    @property
    def current_context(self):
        """The context the networks are built in (the current one unless set)."""
        from ..context import get_current_context
        return self.__dict__.get("_context") or get_current_context()

    @current_context.setter
    def current_context(self, ctx):
        self.__dict__["_context"] = ctx

    @staticmethod
    def from_proto(proto, batch_size=None, param_scope=None, rng=None):
        """The proto graph of an ``NNablaProtoBuf`` message.

        Args:
            proto (nnabla_pb2.NNablaProtoBuf): networks and executors.
            batch_size (int, optional): batch size of every network (default: each one's).
            param_scope (OrderedDict, optional): the graph's parameter scope.
            rng (numpy.random.RandomState, optional): for parameter initializers.
        """
        rng = rng if rng is not None else np.random.RandomState(0)
        g = ProtoGraph(parameter_scope=param_scope)
        for p in proto.network:
            g.networks[p.name] = ProtoNetwork.from_proto(g, p, rng, batch_size)
        for e in proto.executor:
            g.executors[e.name] = ProtoExecutor.from_proto(e)
        return g

    def as_proto(self, include_parameter=False, only_parameter=False, networks=None,
                 variable_batch_size=True):
        """This graph as an ``NNablaProtoBuf`` message (networks, executors and, with
        ``include_parameter``, the parameters)."""
        from ..utils import _nnp_parameters, nnabla_pb2

        proto = nnabla_pb2.NNablaProtoBuf()
        if not only_parameter:
            networks = list(self.networks.values()) if networks is None else list(networks)
            for executor in self.executors.values():
                name, renames = executor.get_network_renaming()
                if renames:
                    networks = [_renamed(n, renames) if n.name == name else n
                                for n in networks]
            proto.network.extend(n.as_proto(variable_batch_size=variable_batch_size)
                                 for n in networks)
            proto.executor.extend(e.as_proto() for e in self.executors.values())
        if include_parameter or only_parameter:
            _nnp_parameters.proto_with_parameters(self.get_parameters(), proto)
        return proto

    def default_graph(self):
        """The first network (the one ``g(...)`` builds)."""
        if self.networks:
            return next(iter(self.networks.values()))
        raise ValueError("No network is found in current graph.")

    def __call__(self, *args, **kwargs):
        return self.default_graph()(*args, **kwargs)

    def save(self, filename, include_parameter=False, variable_batch_size=True,
             executors=None):
        """Save this graph (networks, executors, parameters) to ``filename``."""
        save_content(filename, [self], include_parameter, variable_batch_size,
                     executors=executors)

    def expand_loop_control(self):
        """Unroll the loop control (``repeat_info``, ``RepeatStart`` ...) of every network
        in this graph (see :meth:`ProtoNetwork.expand_loop_control`)."""
        expanded = OrderedDict()
        for name, network in self.networks.items():
            n = network.expand_loop_control()
            n.owner_ = None             # no hard reference back to this graph
            expanded[name] = n
        self.networks = expanded


def _renamed(network, renames):
    """A copy of ``network`` whose variables ``renames`` maps (old -> new) are renamed."""
    n = network.clone()
    mapping = {old: new for old, new in renames.items() if old != new}
    n.variables = OrderedDict((mapping.get(k, k), v) for k, v in n.variables.items())
    for k, v in n.variables.items():
        v.name = k
    for f in n.functions.values():
        f.inputs = [mapping.get(x, x) for x in f.inputs]
        f.outputs = [mapping.get(x, x) for x in f.outputs]
    n.inputs = [mapping.get(x, x) for x in n.inputs]
    n.outputs = [mapping.get(x, x) for x in n.outputs]
    return n
