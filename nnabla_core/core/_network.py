"""Proto networks and proto graphs: networks as data, built into computation graphs on call.

A :class:`ProtoNetwork` holds ``variables`` (buffers), ``parameters``, ``functions``,
``inputs`` and ``outputs`` (names); calling it creates the computation graph on given (or
new) input variables. A :class:`ProtoGraph` is a group of networks sharing a parameter
scope, what an ``.nnp`` file holds.
"""
from __future__ import annotations

import math
import weakref
from collections import OrderedDict

import numpy as np

from .. import parameter as _parameter
from . import _proto
from ._proto import ProtoFunction, ProtoVariable, unique_name

GRAPH_MEMBERS = ("inputs", "outputs", "parameters", "functions", "variables")
_SHAPE_HEAD_FUNCTIONS = ("Constant", "Rand", "Randint", "Randn", "RandBinomial", "RandBeta",
                         "RandGamma")


_SAVE_EXTENSIONS = (".nnp", ".nntxt", ".prototxt", ".protobuf")


def create_initializer(v, rng):
    """The initializer a variable's ``initializer`` (``type``, ``multiplier``) describes, or
    None; ``v`` is an ``nnabla_pb2.Variable`` message or any object with those fields."""
    from ..utils import nnabla_pb2
    from ..utils._nnp_network import _initializer

    init = getattr(v, "initializer", None)
    if init is None or not getattr(init, "type", ""):
        return None
    message = nnabla_pb2.Variable()
    message.initializer.type = init.type
    message.initializer.multiplier = float(getattr(init, "multiplier", 0.0))
    return _initializer(message, rng)


class ProtoExecutor:
    """An executor of a proto graph (the ``Executor`` message, and output renames)."""

    def __init__(self, proto):
        self.proto, self.renaming, self.network_name = proto, None, None

    @staticmethod
    def from_proto(proto):
        return ProtoExecutor(proto)

    @staticmethod
    def create_from_dict(executor, network):
        """From nnabla's executor dict (``name``, ``network``, ``data``, ``output`` as a
        list of names or a dict name -> proto variable, ``remp`` ...)."""
        from ..utils import nnabla_pb2

        remap = executor.get("remp", {})
        e = ProtoExecutor(nnabla_pb2.Executor(name=executor["name"],
                                              network_name=executor["network"]))
        e.network_name = executor.get("network")
        outputs = executor.get("output", {})
        if isinstance(outputs, dict):
            e.renaming = {v.name: n for n, v in outputs.items()}
        e.proto.no_image_normalization = executor.get("no_image_normalization", False)
        e.proto.num_evaluations = executor.get("num_evaluations", 0)
        e.proto.repeat_evaluation_type = executor.get("repeat_evaluation_type", "")
        e.proto.need_back_propagation = executor.get("need_back_propagation", False)
        for name in executor.get("data", []):
            e.proto.data_variable.add(variable_name=name, data_name=remap.get(name, name))
        for name in outputs:
            e.proto.output_variable.add(variable_name=name, data_name=remap.get(name, name))
        for name in executor.get("generator_variables", []):
            e.proto.generator_variable.add(variable_name=name, type="Constant", multiplier=0)
        for name in network.parameters:
            e.proto.parameter_variable.add(variable_name=name)
        return e

    def get_network_renaming(self):
        return self.network_name, self.renaming

    def as_proto(self):
        return self.proto


class ProtoNetwork:
    """A network as data: ``variables``, ``parameters``, ``functions`` (OrderedDicts by
    name), ``inputs`` and ``outputs`` (lists of names).

    ``functions`` is in recording (or file) order; :meth:`forward_sequence` gives the
    order of execution. Calling the network builds its computation graph.
    """

    def __init__(self, owner, name=None, batch_size=None):
        for key in GRAPH_MEMBERS:
            self.__dict__[key] = OrderedDict() if key not in ("inputs", "outputs") else []
        self.arguments = {}
        self.func_names, self.var_names = {}, {}
        self.name = name
        self.owner = weakref.ref(owner)
        self.batch_size = batch_size
        self.repeat_info = {}

    @property
    def current_context(self):
        return self.owner().current_context

    def __getitem__(self, item):
        return self.__dict__[item]

    def __repr__(self):
        return (f"ProtoNetwork(name={self.name!r}, inputs={self.inputs}, "
                f"outputs={self.outputs}, functions={len(self.functions)})")

    # -- recording ------------------------------------------------------------------------
    def _resolve_parameters(self, function, params, drop):
        inputs = []
        for index, key in enumerate(function.inputs):
            v = self.parameters.get(key) if key not in self.variables else None
            if v is None or isinstance(v, ProtoVariable):
                inputs.append(key)
                continue
            drop.add(key)
            name = params.get(id(v._node.data))
            if name is None:        # a parameter created outside any scope (a local one)
                name = unique_name(self.var_names, f"{function.name}_{index}")
            p = self.parameters.get(name)
            if not isinstance(p, ProtoVariable):
                p = ProtoVariable(v.shape, name, v.need_grad, "Parameter")
                p.variable_instance = v
                info = getattr(v, "info", None)
                p.initializer = getattr(info, "initializer", None)
                self.parameters[name] = p
            p.required.append(function.name)
            inputs.append(name)
        function.inputs = inputs

    def commit(self, name, networks, params):
        """Finish recording: name the network, name its parameters (``params``: identity
        of a parameter's data -> scope name), put them in the graph's parameter scope."""
        networks[name] = self
        drop = set()
        for f in self.functions.values():
            self._resolve_parameters(f, params, drop)
        for key in drop:
            self.parameters.pop(key, None)
        with _parameter.parameter_scope("", self.owner().parameter_scope):
            for key, p in self.parameters.items():
                _parameter.set_parameter(key, p.variable_instance)
        for v in self.variables.values():
            if v.parent not in self.functions:
                v.parent = None
        self._update_ports()
        self.name = name

    def _update_ports(self):
        self.inputs = [k for k, v in self.variables.items() if not v.parent and v.required]
        self.outputs = [k for k, v in self.variables.items() if not v.required and v.parent]

    # -- order ----------------------------------------------------------------------------
    def _get(self, name):
        return self.variables[name] if name in self.variables else self.parameters[name]

    def execute_on_proto(self, execute):
        """Call ``execute(function)`` for each enabled function, each after the ones
        writing its inputs."""
        done = set()
        for f in list(self.functions.values()):
            stack = [f]
            while stack:
                top = stack[-1]
                if top.name in done:
                    stack.pop()
                    continue
                pending = [self.functions[p] for p in
                           (self._get(n).parent for n in top.inputs)
                           if p is not None and p in self.functions and p not in done]
                if pending:
                    if any(p in stack for p in pending):
                        raise ValueError(f"nn.graph_def: network {self.name!r} has a cycle "
                                         f"through function {top.name!r}")
                    stack.extend(pending)
                    continue
                stack.pop()
                done.add(top.name)
                if not top.disabled:
                    execute(top)

    def forward_sequence(self):
        """The functions in the order they run."""
        functions = []
        self.execute_on_proto(functions.append)
        yield from functions

    # -- building -------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Build the computation graph of this network.

        Args:
            *args (nnabla.Variable): the inputs, in the order of ``inputs``; when none is
                given, new input variables are created (``variables[name]
                .variable_instance``), with a leading ``-1`` replaced by ``batch_size``.
            batch_size (int, optional): the batch size (default: the network's).
            ctx (nnabla.Context, optional): context of the created functions.

        Returns:
            nnabla.Variable, or a tuple of them for several outputs.
        """
        from ..context import context_scope

        owner = self.owner()
        if kwargs.get("ctx") is not None:
            owner.current_context = kwargs["ctx"]
        batch_size = kwargs.get("batch_size")
        batch_size = batch_size if batch_size is not None else self.batch_size
        inputs = [self._get(k) for k in self.inputs]
        with _parameter.parameter_scope("", owner.parameter_scope), \
                context_scope(owner.current_context):
            if not args:
                self._create_inputs(inputs, batch_size)
            else:
                if len(args) > len(inputs):
                    raise ValueError(f"nn.graph_def: network {self.name!r} takes "
                                     f"{len(inputs)} inputs {self.inputs}; {len(args)} given")
                for pv, v in zip(inputs, args):
                    pv.variable_instance = v
            self.execute_on_proto(lambda pf: pf.graph_call(batch_size=batch_size))
        outputs = [self.variables[k].variable_instance for k in self.outputs]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _create_inputs(self, inputs, batch_size):
        from .._variable import Variable

        for pv in inputs:
            shape = tuple(d if d >= 1 else (batch_size or 1) for d in pv.shape)
            if callable(pv.initializer):
                shared = self.owner().global_variables.get(pv.name)
                if shared is None:
                    shared = Variable.from_numpy_array(pv.initializer(shape=shape),
                                                       need_grad=True)
                    self.owner().global_variables[pv.name] = shared
                pv.variable_instance = shared
            elif pv.variable_instance is None or tuple(pv.variable_instance.shape) != shape:
                pv.variable_instance = Variable(shape)

    # -- export ---------------------------------------------------------------------------
    def as_proto(self, **kwargs):
        """This network as an ``nnabla_pb2.Network`` message.

        Args:
            variable_batch_size (bool, optional): store the batch dimension as ``-1``
                (default True), as nnabla does.
        """
        from ..utils import nnabla_pb2

        if kwargs:
            self.arguments.update(kwargs)
        variables = OrderedDict((k, v.clone()) for k, v in self.variables.items())
        functions = OrderedDict((k, f.clone(self.owner())) for k, f in self.functions.items())
        ordered = [functions[f.name] for f in self.forward_sequence()]
        _resolve_reshape(ordered, variables, self.parameters)
        batch_size = self.batch_size
        if self.arguments.get("variable_batch_size", True):
            batch_size = _variable_batch_size(ordered, variables) or batch_size
        n = nnabla_pb2.Network(name=self.name or "")
        if batch_size:
            n.batch_size = int(batch_size)
        for v in list(variables.values()) + list(self.parameters.values()):
            n.variable.append(v.proto)
        for f in functions.values():
            n.function.append(f.proto)
        return n

    def save(self, filename, include_parameter=False, variable_batch_size=True,
             executors=None):
        """Save this network (with its graph's parameters) to ``filename``."""
        save_content(filename, [self], include_parameter, variable_batch_size,
                     executors=executors)

    def clone(self):
        """A copy of this network (variables and functions copied; same graph)."""
        n = ProtoNetwork(self.owner(), self.name, self.batch_size)
        n.variables = OrderedDict((k, v.clone()) for k, v in self.variables.items())
        n.parameters = OrderedDict((k, v.clone()) for k, v in self.parameters.items())
        n.functions = OrderedDict((k, f.clone(n)) for k, f in self.functions.items())
        n.inputs, n.outputs = list(self.inputs), list(self.outputs)
        n.owner_ = self.owner()
        return n

    @staticmethod
    def from_proto(owner, proto, rng, batch_size):
        """The proto network of an ``nnabla_pb2.Network`` message."""
        from ..utils._nnp_functions import NnpFormatError, read_arguments, spec_of

        g = ProtoNetwork(owner)
        g.repeat_info = {r.id: r.times for r in proto.repeat_info}
        g.batch_size = batch_size if batch_size else proto.batch_size
        g.name = proto.name
        where = f"nn.graph_def: network {proto.name!r}: "
        for v in proto.variable:
            if v.type not in ("Buffer", "Parameter"):
                raise NnpFormatError(f"{where}variable {v.name!r} has type {v.type!r}; "
                                     f"expected 'Buffer' or 'Parameter'")
            table = g.variables if v.type == "Buffer" else g.parameters
            pv = table[v.name] = ProtoVariable(list(v.shape.dim), v.name,
                                               v.type == "Parameter", v.type)
            pv.initializer = create_initializer(v, rng)
            pv.repeat_id = list(v.repeat_id)
        for f in proto.function:
            spec_of(f.type, f"{where}function {f.name!r}: ")
            pf = g.functions[f.name] = ProtoFunction(
                None, f.type, read_arguments(f, f"{where}function {f.name!r}: "), f.name, g)
            pf.repeat_id = list(f.repeat_id)
            for names, link in ((f.input, "required"), (f.output, "parent")):
                for n in names:
                    if n not in g.variables and n not in g.parameters:
                        raise NnpFormatError(f"{where}function {f.name!r} uses variable "
                                             f"{n!r}, which the network does not declare")
                    pv = g._get(n)
                    if link == "required":
                        pf.inputs.append(n)
                        pv.required.append(pf.name)
                    else:
                        pf.outputs.append(n)
                        pv.parent = pf.name
        g._update_ports()
        return g


def _resolve_reshape(functions, variables, parameters):
    for f in functions:
        shape = f.args.get("shape") if f.type == "Reshape" else None
        if shape is None or not any(s < 0 for s in shape):
            continue
        if sum(1 for s in shape if s < 0) > 1:
            raise ValueError(f"nn.graph_def: Reshape {f.name!r}: shape {tuple(shape)} has "
                             f"several negative entries")
        source = variables.get(f.inputs[0]) or parameters[f.inputs[0]]
        known = math.prod(s for s in shape if s >= 0)
        f.args["shape"] = tuple(math.prod(source.shape) // max(known, 1) if s < 0 else s
                                for s in shape)


def _folded(shape, base_axis):
    return (int(np.prod(shape[:base_axis])),) + tuple(shape[base_axis:])


def _variable_batch_size(functions, variables):
    """nnabla 1.39's batch abstraction of a proto network (on copies): the batch size is
    the product of the leading ``base_axis`` dimensions of an input of the last function
    with a nonzero ``base_axis``; dimension 0 equal to it becomes ``-1``.

    Returns:
        int or None: the batch size found.
    """
    batch = None
    for f in functions:
        if f.args.get("base_axis", 0) != 0:
            first = next((n for n in f.inputs if n in variables), None)
            if first is not None:
                batch = int(np.prod(variables[first].shape[:f.args["base_axis"]]))
    if batch is None:
        return None
    special, resolved = set(), set()
    for f in functions:
        if next((n for n in f.inputs if n in variables and n not in special), None) is None:
            special.update(f.outputs)
            continue
        base_axis = f.args.get("base_axis")
        if base_axis is not None and base_axis != 1:
            for n in f.inputs:
                if n in variables and n not in resolved and n not in special:
                    variables[n].shape = _folded(variables[n].shape, base_axis)
                    resolved.add(n)
            for n in f.outputs:
                if n not in resolved:
                    variables[n].shape = _folded(variables[n].shape, base_axis)
            f.args["base_axis"] = 1
        _abstract_shape_argument(f, batch, variables)
    for v in variables.values():
        if v.shape and v.name not in special and v.shape[0] == batch:
            v.shape = (-1,) + tuple(v.shape[1:])
    return batch


def _abstract_shape_argument(f, batch, variables):
    shape = list(f.args.get("shape") or [])
    if f.type in ("Reshape",) + _SHAPE_HEAD_FUNCTIONS and shape and shape[0] == batch:
        f.args["shape"] = tuple([-1] + shape[1:])
    elif f.type == "Broadcast" and shape:
        rank = len(variables[f.inputs[0]].shape)
        if rank < len(shape):
            diff = len(shape) - rank
            if math.prod(shape[:diff + 1]) == batch:
                f.args["shape"] = tuple([-1] + shape[diff + 1:])
        elif shape[0] == batch:
            f.args["shape"] = tuple([-1] + shape[1:])


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
        """Loop control (RepeatStart ...) is not supported; raises if a network has it."""
        for n in self.networks.values():
            if n.repeat_info or any(f.repeat_id for f in n.functions.values()):
                raise NotImplementedError(
                    f"nn.graph_def: network {n.name!r} uses loop control (repeat_info), "
                    f"written by Neural Network Console; it is not supported")


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


def _graph_proto(content, include_parameters, variable_batch_size, executors):
    for g in content:
        if isinstance(g, ProtoGraph):
            if executors is not None:
                g.executors = OrderedDict(
                    (e["name"], ProtoExecutor.create_from_dict(e, g.networks[e["network"]]))
                    for e in executors)
            return g.as_proto(include_parameter=include_parameters,
                              variable_batch_size=variable_batch_size), g.get_parameters()
        if isinstance(g, ProtoNetwork):
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
