"""Proto networks: networks as data, built into computation graphs on call.

A :class:`ProtoNetwork` holds ``variables`` (buffers), ``parameters``, ``functions``,
``inputs`` and ``outputs`` (names); calling it creates the computation graph on given (or
new) input variables.
"""
from __future__ import annotations

import weakref
from collections import OrderedDict

from .. import parameter as _parameter
from ..logger import logger
from ._batch import _resolve_reshape, _variable_batch_size
from ._files import save_content
from .._naming import unique_name
from ._proto import ProtoFunction, ProtoVariable

GRAPH_MEMBERS = ("inputs", "outputs", "parameters", "functions", "variables")


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
                As in nnabla, arguments beyond the network's inputs are ignored (with a
                logged warning).
            batch_size (int, optional): the batch size (default: the network's).
            ctx (nnabla.Context, optional): context of the created functions.

        Returns:
            nnabla.Variable, or a tuple of them for several outputs (an empty tuple for a
            network without outputs).
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
                    # nnabla pairs arguments with inputs and ignores the rest; say so
                    logger.warning(f"nn.graph_def: network {self.name!r} takes "
                                   f"{len(inputs)} inputs {self.inputs}; {len(args)} given, "
                                   f"the last {len(args) - len(inputs)} are ignored")
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

    def expand_loop_control(self):
        """This network with the loop control of Neural Network Console (``repeat_info``,
        ``RepeatStart`` ... ``Delay``) unrolled, as a new network (a copy when there is
        none); see :mod:`nnabla.utils._nnp_loop` for the naming."""
        from ..utils._nnp_loop import expand_loop_control

        source = getattr(self, "_loop_source", None)
        if source is None:
            return self.clone()
        n = ProtoNetwork.from_proto(self.owner(), expand_loop_control(source), self._rng,
                                    self.batch_size)
        n.owner_ = self.owner()
        return n

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
        from ..utils._nnp_loop import LOOP_CONTROL, has_loop_control

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
        if has_loop_control(proto):
            g._loop_source, g._rng = proto, rng     # for expand_loop_control()
        for f in proto.function:
            if f.type in LOOP_CONTROL:
                args = {}
            else:
                spec_of(f.type, f"{where}function {f.name!r}: ")
                args = read_arguments(f, f"{where}function {f.name!r}: ")
            pf = g.functions[f.name] = ProtoFunction(None, f.type, args, f.name, g)
            pf.repeat_id = list(f.repeat_id)
            if f.HasField("repeat_param"):
                pf.repeat_param = f.repeat_param
            if f.HasField("recurrent_param"):
                pf.recurrent_param = f.recurrent_param
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
