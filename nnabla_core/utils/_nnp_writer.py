"""A computation graph as an NNP ``Network`` message, named and batch-abstracted as nnabla does.

Naming follows nnabla 1.39's graph export: a function is named after its type, made unique
with ``_1``, ``_2`` ... (``Affine``, ``Affine_1``); an output is ``<Type>_out`` (unique the
same way) unless ``names`` names it; an unnamed network input is ``<Type>_in``; a registered
parameter keeps its scope path (``fc1/affine/W``). Buffers come first, then parameters, each
in the order the graph walk meets them.

With ``variable_batch_size`` the batch size is read from the first function with a
``base_axis`` (the product of its input's leading dimensions) and every dimension 0 equal to
it becomes ``-1``, as do the first entry of the ``shape`` argument of Reshape, Broadcast,
Constant and the random generators; functions with ``base_axis`` above 1 get their inputs
and outputs folded to ``base_axis=1`` (nnabla's rule, so its files and ours agree).
"""
from __future__ import annotations

import math
from collections import OrderedDict

from .. import _graph
from . import _nnp_functions, nnabla_pb2
from .._naming import unique_name

_SHAPE_HEAD_FUNCTIONS = ("Constant", "Rand", "Randint", "Randn", "RandBinomial", "RandBeta",
                         "RandGamma")


class _Var:
    __slots__ = ("name", "type", "shape", "parent")

    def __init__(self, name, var_type, shape):
        self.name, self.type, self.shape, self.parent = name, var_type, list(shape), None


class _Func:
    __slots__ = ("name", "type", "inputs", "outputs", "args")

    def __init__(self, name, type_name, args):
        self.name, self.type, self.args = name, type_name, dict(args)
        self.inputs, self.outputs = [], []


class _GraphWriter:
    """Walks a graph once and records named variables and functions."""

    def __init__(self, names, params):
        self.names = {id(v._node.data): k for k, v in names.items()}
        self.params = params                   # id(SyncedArray) -> parameter name
        self.keep = [v._node.data for v in names.values()]
        self.variables = OrderedDict()         # id(SyncedArray) -> _Var
        self.var_counter, self.func_counter = {}, {}
        self.functions = []

    def _input(self, node, type_name):
        key = id(node.data)
        var = self.variables.get(key)
        if var is not None:
            return var
        if key in self.params:
            var = _Var(self.params[key], "Parameter", node.shape)
        else:
            name = self.names.get(key)
            if name is None:
                name = unique_name(self.var_counter, f"{type_name}_in")
            var = _Var(name, "Buffer", node.shape)
        self.keep.append(node.data)
        self.variables[key] = var
        return var

    def visit(self, function):
        type_name = function.spec.name
        if type_name == "Sink":  # nnabla leaves the sink joining several outputs out
            return
        record = _Func(unique_name(self.func_counter, type_name), type_name, function._args)
        for node in function.in_nodes:
            if node is not None:
                record.inputs.append(self._input(node, type_name).name)
        shapes = getattr(function.kernel, "out_shapes", None) or []
        for i, ref in enumerate(function.out_refs):
            node = ref()
            given = None if node is None else self.names.get(id(node.data))
            name = unique_name(self.var_counter, given or f"{type_name}_out")
            if given is not None and name != given:
                raise ValueError(f"nnabla.utils.save: the name {given!r} is given to two "
                                 f"variables; names must be unique in a network")
            shape = node.shape if node is not None else shapes[i]
            var = _Var(name, "Buffer", shape)
            var.parent = record.name
            key = id(node.data) if node is not None else ("dead", record.name, i)
            if node is not None:
                self.keep.append(node.data)
            self.variables[key] = var
            record.outputs.append(name)
        self.functions.append(record)


def _resolve_reshape(functions, shapes):
    for f in functions:
        if f.type == "Reshape" and any(s < 0 for s in f.args["shape"]):
            target = list(f.args["shape"])
            known = math.prod(s for s in target if s >= 0)
            index = next(i for i, s in enumerate(target) if s < 0)
            target[index] = math.prod(shapes[f.inputs[0]]) // max(known, 1)
            f.args["shape"] = tuple(target)


def _variable_batch_size(functions, variables):
    """nnabla's batch abstraction on the recorded network (see the module docstring)."""
    buffers = {v.name: v for v in variables if v.type == "Buffer"}
    batch = None
    for f in functions:
        base_axis = f.args.get("base_axis")
        if base_axis:
            first = next((n for n in f.inputs if n in buffers), None)
            if first is not None:
                batch = math.prod(buffers[first].shape[:base_axis])
                break
    if batch is None:
        return None
    special, resolved = set(), set()
    for f in functions:
        normal = next((n for n in f.inputs if n in buffers and n not in special), None)
        if normal is None:
            special.update(f.outputs)
            continue
        base_axis = f.args.get("base_axis")
        if base_axis is not None and base_axis != 1:
            for name in f.inputs + f.outputs:
                if name in buffers and name not in resolved and name not in special:
                    shape = buffers[name].shape
                    buffers[name].shape = [math.prod(shape[:base_axis])] + shape[base_axis:]
                    resolved.add(name)
            f.args["base_axis"] = 1
        _abstract_shape_argument(f, batch, buffers)
    for var in buffers.values():
        if var.shape and var.name not in special and var.shape[0] == batch:
            var.shape[0] = -1
    return batch


def _abstract_shape_argument(f, batch, buffers):
    if f.type in ("Reshape",) + _SHAPE_HEAD_FUNCTIONS:
        shape = list(f.args["shape"])
        if shape and shape[0] == batch:
            f.args["shape"] = tuple([-1] + shape[1:])
    elif f.type == "Broadcast":
        shape = list(f.args["shape"])
        rank = len(buffers[f.inputs[0]].shape)
        if rank < len(shape):
            diff = len(shape) - rank
            if math.prod(shape[:diff + 1]) == batch:
                f.args["shape"] = tuple([-1] + shape[diff + 1:])
        elif shape and shape[0] == batch:
            f.args["shape"] = tuple([-1] + shape[1:])


def network_proto(name, outputs, names, params, batch_size=None, variable_batch_size=True):
    """The ``Network`` message of the graph ending at ``outputs``.

    Args:
        name (str): network name.
        outputs (list of Variable): its outputs.
        names (dict): name -> Variable for variables to name explicitly.
        params (dict): name -> Variable of the registered parameters.
        batch_size (int, optional): stored as ``batch_size`` (else the detected one).
        variable_batch_size (bool): abstract the batch dimension (``-1``).

    Returns:
        nnabla_pb2.Network
    """
    writer = _GraphWriter(names, {id(v._node.data): k for k, v in params.items()})
    for function in _graph.topological_functions([v._node for v in outputs]):
        writer.visit(function)
    variables = [v for v in writer.variables.values() if v.type == "Buffer"]
    variables += [v for v in writer.variables.values() if v.type == "Parameter"]
    _resolve_reshape(writer.functions, {v.name: v.shape for v in variables})
    detected = None
    if variable_batch_size:
        detected = _variable_batch_size(writer.functions, variables)
    network = nnabla_pb2.Network(name=name)
    if batch_size or detected:
        network.batch_size = int(batch_size or detected)
    for var in variables:
        message = network.variable.add(name=var.name, type=var.type)
        message.shape.dim.extend(int(d) for d in var.shape)
    for f in writer.functions:
        message = network.function.add(name=f.name, type=f.type)
        message.input.extend(f.inputs)
        message.output.extend(f.outputs)
        _nnp_functions.write_arguments(message, f.type, f.args)
    return network
