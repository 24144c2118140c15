"""``nn.graph_def``: networks recorded as data, saved, loaded and built again.

Passing :class:`ProtoVariable` inputs to ``F``/``PF`` functions (or to an
:class:`nnabla.Module`) records a :class:`ProtoNetwork` in the current
:class:`ProtoGraph`: the one of a ``with nn.graph_def.graph() as g:`` block, else the
default graph (:func:`get_default_graph`). A proto graph is saved as ``.nnp``, ``.nntxt``
or ``.protobuf`` (:func:`save`), loaded back (:func:`load`), and called with
``nnabla.Variable`` inputs to build the computation graph (``g(x)``).

Example:
    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> import nnabla.parametric_functions as PF
    >>> nn.clear_parameters()
    >>> with nn.graph_def.graph(name="net") as g:
    ...     x = nn.ProtoVariable((2, 3), name="x")
    ...     y = F.relu(PF.affine(x, 4, name="fc"))
    >>> list(g.net.parameters), g.net.inputs, g.net.outputs
    (['fc/affine/W', 'fc/affine/b'], ['x'], ['@net/ReLU_out'])
    >>> v = nn.Variable.from_numpy_array(np.ones((5, 3)))
    >>> out = g(v)              # builds the graph on a batch of 5
    >>> out.forward(); out.shape
    (5, 4)
    >>> nn.clear_parameters()
"""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from ._builder import FlatModule, ProtoGraphBuilder  # noqa: F401
from ._executor import ProtoExecutor  # noqa: F401
from ._files import save_content
from ._graph import ProtoGraph
from ._network import ProtoNetwork  # noqa: F401
from ._network import create_initializer as _create_initializer  # noqa: F401
from ._proto import (RECORDING, ProtoFunction, ProtoVariable,  # noqa: F401
                     current_graph_builder, current_module, current_network)

__all__ = ["ProtoGraph", "ProtoNetwork", "ProtoVariable", "ProtoFunction", "graph",
           "graph_name", "get_default_graph", "get_default_graph_by_variable",
           "reset_default_graph", "create_graph_from_variable", "load", "save"]

def load(filename, batch_size=None, exclude_parameter=False, parameter_only=False,
         extension=".nntxt", parameter_scope=None, rng=None):
    """Load networks (and their parameters) from files into a :class:`ProtoGraph`.

    Args:
        filename (str, file object or list of them): ``.nnp``, ``.nntxt``/``.prototxt``,
            ``.protobuf`` or ``.h5`` files, read in order.
        batch_size (int, optional): batch size of the networks (default: each one's).
        exclude_parameter (bool): read the networks only.
        parameter_only (bool): read the parameters only.
        extension (str): format of a file object.
        parameter_scope (OrderedDict, optional): where the parameters go (a new scope owned
            by the graph when None).
        rng (numpy.random.RandomState, optional): for parameter initializers.

    Returns:
        ProtoGraph

    Raises:
        FileNotFoundError, ValueError: for a missing or invalid file (naming it).
    """
    from ..utils._nnp_reader import read_model

    scope = parameter_scope if parameter_scope is not None else OrderedDict()
    proto, _ = read_model(filename, extension=extension, scope=scope,
                          exclude_parameter=exclude_parameter, parameter_only=parameter_only)
    return ProtoGraph.from_proto(proto, batch_size=batch_size, param_scope=scope,
                                 rng=rng if rng is not None else np.random.RandomState(0))


def save(filename, content, include_parameters=False, variable_batch_size=True,
         extension=".nnp", executors=None):
    """Save a proto graph or network (atomically).

    Args:
        filename (str, os.PathLike or file object): ``.nnp`` (network text and
            ``parameter.h5`` in a zip), ``.nntxt``/``.prototxt`` (text) or ``.protobuf``.
        content (list): a :class:`ProtoGraph` or :class:`ProtoNetwork` (the first one of
            the list is saved).
        include_parameters (bool): put the parameters into ``.nntxt``/``.protobuf``
            (an ``.nnp`` always holds them).
        variable_batch_size (bool): store the batch dimension as ``-1``.
        extension (str): format of a file object.
        executors (list of dict, optional): executors (``name``, ``network``, ``data``,
            ``output``: a list of names or a dict name -> ProtoVariable, ``remp``).

    Raises:
        ValueError: for an unknown format or content.
    """
    save_content(filename, content if isinstance(content, (list, tuple)) else [content],
                 include_parameters, variable_batch_size, extension, executors)


@contextmanager
def graph(**kwargs):
    """Record F/PF calls on proto variables into a new :class:`ProtoGraph` (``with``).

    Args:
        name (str, optional): name of the recorded network.
        parameter_scope (OrderedDict, optional): the graph's parameter scope.

    Yields:
        ProtoGraph: complete when the block ends.
    """
    previous = current_graph_builder()
    builder = RECORDING.builder = ProtoGraphBuilder(**kwargs)
    try:
        yield builder.get_graph()
        if builder.is_dirty():
            builder.commit_network()
    finally:
        RECORDING.builder = previous


@contextmanager
def graph_name(name):
    """Name the network recorded in the ``with`` block ``name`` (committed at its end)."""
    builder = current_graph_builder()
    previous, builder.graph_name = builder.graph_name, name
    try:
        yield builder.current
        if builder.is_dirty():
            builder.commit_network()
    finally:
        builder.graph_name = previous


@contextmanager
def module_scope(builder, module):
    """Record the calls of the ``with`` block as part of ``module`` (used by Module)."""
    network = builder.begin_module(module)
    try:
        yield network
    finally:
        builder.end_module()


def reset_default_graph():
    """Forget every network of the default graph."""
    RECORDING.builder = ProtoGraphBuilder()


def get_default_graph(*args, **kwargs):
    """The default proto graph, or one of its networks by name.

    Args:
        name (str, optional): a network name (positional or keyword).

    Returns:
        ProtoGraph, or ProtoNetwork (None if no network has that name).
    """
    name = args[0] if args and isinstance(args[0], str) else kwargs.get("name")
    builder = current_graph_builder()
    if builder.is_dirty():
        builder.commit_network()
    if name is None:
        return builder.proto_graph
    return builder.proto_graph.networks.get(name)


def get_default_graph_by_variable(proto_variable):
    """The network of the default graph that has ``proto_variable`` among its outputs.

    Raises:
        ValueError: if no network has it as an output.
    """
    builder = current_graph_builder()
    if builder.is_dirty():
        builder.commit_network()
    for network in builder.proto_graph.networks.values():
        if proto_variable.name in network.outputs:
            return network
    raise ValueError(f"{proto_variable.name} is not the output variable of any network")


class _GraphRecorder:
    """Replays the functions of a computation graph on proto variables."""

    def __init__(self, names, params):
        self.names = {id(v._node.data): k for k, v in (names or {}).items()}
        self.names.update(params)
        self.params = params
        self.variables = {}
        self.outputs = []

    def renaming(self, i, name):
        return self.names.get(id(self.outputs[i]._node.data), name)

    def __call__(self, func):
        from .._variable import variable_of
        from ._proto import record_inputs

        if func.info.type_name == "Sink":
            return
        inputs = []
        for node in func.in_nodes:
            if node is None:
                inputs.append(None)
                continue
            v = variable_of(node)
            key = id(node.data)
            if key not in self.variables:
                if key in self.params:
                    self.variables[key] = v     # recorded as a parameter, named at commit
                else:
                    pv = ProtoVariable(v.shape, name=self.names.get(key))
                    pv.variable_instance = v
                    self.variables[key] = pv
            inputs.append(self.variables[key])
        self.outputs = func.outputs
        function = ProtoFunction(None, func.info.type_name, func.info.args)
        outputs = record_inputs(function, inputs, len(func.outputs))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        for pv, v in zip(outputs, func.outputs):
            self.variables[id(v._node.data)] = pv


def create_graph_from_variable(name, variables, names=None, parameter_scope=None):
    """The proto graph of the computation graph ending at ``variables``.

    Args:
        name (str): name of the network.
        variables (nnabla.Variable or list of them): the outputs.
        names (dict, optional): name -> Variable, names for variables of the network.
        parameter_scope (OrderedDict, optional): where the parameters are found (the
            current scope when None).

    Returns:
        ProtoGraph
    """
    from .. import functions as F
    from .. import parameter as P

    output = F.sink(*variables) if isinstance(variables, (list, tuple)) else variables
    with P.parameter_scope("", parameter_scope if parameter_scope else P.current_scope):
        params = {id(v._node.data): k for k, v in P.get_parameters(grad_only=False).items()}
    with graph(parameter_scope=parameter_scope, name=name) as g:
        builder = current_graph_builder()
        recorder = _GraphRecorder(names, params)
        network = builder.get_current()
        network.renaming = recorder.renaming
        output.visit(recorder)
        del network.renaming
        builder.commit_network(params)
    for network in g.networks.values():
        for pv in network.variables.values():
            pv.variable_instance = None
    return g


def _from_loaded(proto, networks, parameter_scope, batch_size=None):
    """The proto graph of a file ``nnabla.utils.load`` read (``info.proto_graph``), its
    variables' ``variable_instance`` being those of the networks it built (``networks``:
    name -> network with ``variables``/``parameters`` of built variables)."""
    g = ProtoGraph.from_proto(proto, batch_size=batch_size, param_scope=parameter_scope)
    g.expand_loop_control()     # as the networks were built (nnabla.utils._nnp_loop)
    for name, network in g.networks.items():
        built = networks.get(name)
        if built is None:
            continue
        for table, source in ((network.variables, built.variables),
                              (network.parameters, built.parameters)):
            for key, pv in table.items():
                if key in source:
                    pv.variable_instance = source[key].variable_instance
    return g
