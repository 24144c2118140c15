"""The builder that records F/PF calls on proto variables into a proto graph.

Functions are recorded into the builder's current network; the network is committed (named,
its parameters resolved to their scope names, added to the graph) when the outermost module
call returns, when a ``graph()``/``graph_name()`` block ends, or when the default graph is
asked for.
"""
from __future__ import annotations

from collections import OrderedDict

from .. import parameter as _parameter
from . import _proto
from ._graph import ProtoGraph
from ._network import ProtoNetwork
from .._naming import unique_name


class FlatModule:
    """The module a network recorded outside any :class:`nnabla.Module` belongs to."""

    def __init__(self, name):
        self.name = name if name else "model"

    @staticmethod
    def get_parameters(recursive=True, grad_only=False, memo=None):
        """The parameters of the current scope that need a gradient, whatever
        ``grad_only`` says: nnabla 1.39 names a flat network's parameters from this list, so
        the others (batch-norm ``mean``/``var``) get ``<function>_<input index>`` names in
        its files, and in ours."""
        return _parameter.get_parameters()

    def get_path_name(self):
        """Prefix of the names recorded in this module (none for the default ``model``)."""
        return f"@{self.name}" if self.name != "model" else ""


class ProtoGraphBuilder:
    """Holds the network being recorded and the module stack while a graph is built.

    Args:
        name (str, optional): name of the next committed network.
        parameter_scope (OrderedDict, optional): the graph's parameter scope.
    """

    def __init__(self, **kwargs):
        self.networks = OrderedDict()
        self.stack = []
        self.current = None
        self.module = None
        self.names = {}
        self.dirty_flag = False
        self.graph_name = kwargs.get("name", None)
        self.proto_graph = ProtoGraph(self.networks, kwargs.get("parameter_scope", None))

    def get_current(self):
        """The network being recorded (created on first use)."""
        if self.current is None:
            self.current = ProtoNetwork(self.proto_graph)
        return self.current

    def get_module(self):
        """The module being recorded (a :class:`FlatModule` outside any module call)."""
        if self.module is None:
            self.module = FlatModule(self.graph_name)
        return self.module

    def dirty(self):
        self.dirty_flag = True

    def is_dirty(self):
        return self.dirty_flag

    def get_graph(self):
        return self.proto_graph

    def begin_module(self, module):
        """Enter a module call; returns the network being recorded."""
        self.stack.append(module)
        self.module = module
        return self.get_current()

    def end_module(self):
        """Leave a module call; leaving the outermost one commits the network."""
        self.stack.pop()
        if self.stack:
            self.module = self.stack[-1]
        else:
            self.commit_network()

    def commit_network(self, params=None):
        """Name the recorded network, resolve its parameters and add it to the graph.

        Args:
            params (dict, optional): identity of a parameter's data -> its name (default:
                the parameters of the module being recorded).
        """
        if self.graph_name:
            name, self.graph_name = self.graph_name, None
        else:
            name = self.get_module().name
        name = unique_name(self.names, name)
        if params is None:
            params = {id(v._node.data): k
                      for k, v in self.get_module().get_parameters().items()}
        self.get_current().commit(name, self.networks, params)
        self.dirty_flag = False
        self.current = None
        self.module = None


_proto.RECORDING.new_builder = ProtoGraphBuilder
