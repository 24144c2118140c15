"""An NNP ``Network`` message, checked, and the computation graph built from it.

:class:`NetworkGraph` holds a network's variables and functions as nnabla's loaders show
them (``variables``/``parameters``: name -> :class:`NetworkVariable` with ``variable_instance``
once built; ``functions``; ``inputs``/``outputs`` names). The ``proto`` messages are the
source of truth: network passes (:class:`nnabla.utils.nnp_graph.NnpNetworkPass`) edit them
and the graph re-reads them. :meth:`NetworkGraph.build` creates the graph with the spec's
functions (``nnabla._dispatch.call``), parameters from the current parameter scope, and a
placeholder batch dimension (``-1`` or ``0``) replaced by the batch size.

Loop control written by Neural Network Console (``repeat_info``, ``RepeatStart`` ...) is
unrolled first (:mod:`nnabla.utils._nnp_loop`). Loading refuses, with the network, function
and variable named: unknown function types, inputs or outputs that name no declared
variable, a variable written by two functions, cycles, wrong input counts, missing
parameters, and (in networks without a batch placeholder) declared shapes that differ from
the shapes the functions compute.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from .. import initializer as I
from .._dispatch import call
from ._nnp_functions import NnpFormatError, place_inputs, read_arguments, spec_of
from ._nnp_loop import expand_loop_control, has_loop_control


class NetworkVariable:
    """One variable of a network (nnabla's ``ProtoVariable`` as loaders expose it)."""

    def __init__(self, proto):
        self.proto = proto
        self.parent = None
        self.required = []
        self.variable_instance = None
        self.stop = False
        self.need_grad = proto.type == "Parameter"

    @property
    def name(self):
        return self.proto.name

    @property
    def type(self):
        return self.proto.type

    @property
    def shape(self):
        return tuple(int(d) for d in self.proto.shape.dim)

    def __repr__(self):
        return f"NetworkVariable({self.name!r}, {self.type}, shape={self.shape})"


class NetworkFunction:
    """One function of a network: its proto message, ``disabled`` by a network pass."""

    def __init__(self, proto):
        self.proto = proto
        self.disabled = False
        self.function_instance = None

    name = property(lambda self: self.proto.name)
    type = property(lambda self: self.proto.type)
    inputs = property(lambda self: list(self.proto.input))
    outputs = property(lambda self: list(self.proto.output))

    @property
    def args(self):
        return read_arguments(self.proto)

    def __repr__(self):
        return f"NetworkFunction({self.name!r}, {self.type})"


def _initializer(proto, rng):
    """The initializer a ``Variable.initializer`` message describes (None if none)."""
    if not proto.HasField("initializer") or not proto.initializer.type:
        return None
    kind, m = proto.initializer.type, proto.initializer.multiplier
    if kind == "Normal":
        return I.NormalInitializer(m, rng=rng)
    if kind == "Uniform":
        return I.UniformInitializer((-m, m), rng=rng)
    if kind == "Constant":
        return I.ConstantInitializer(m)
    if kind == "Range":
        return lambda shape: I.RangeInitializer(0, 1)(shape) * m
    scaled = _SCALED.get(kind)
    if scaled is None:
        return None
    return lambda shape: scaled(shape, rng) * m


def _fans(shape, layout):
    if layout == "affine":
        return shape[0], math.prod(shape[1:]), (1, 1)
    if layout == "conv":
        return shape[-3], shape[0], tuple(shape[-2:])
    return shape[-1], shape[0], tuple(shape[1:3])


def _scaled(std, layout, uniform=False):
    def make(shape, rng):
        inmaps, outmaps, kernel = _fans(shape, layout)
        if uniform:
            lim = I.calc_uniform_lim_glorot(inmaps, outmaps, kernel)
            return I.UniformInitializer(lim, rng=rng)(shape)
        return I.NormalInitializer(std(inmaps, outmaps, kernel), rng=rng)(shape)
    return make


_SCALED = {}
for _layout, _tag in (("affine", "Affine"), ("conv", "Convolution"), ("clconv", "CLConv")):
    _SCALED[f"Normal{_tag}He"] = _SCALED[f"Normal{_tag}HeForward"] = _scaled(
        I.calc_normal_std_he_forward, _layout)
    _SCALED[f"Normal{_tag}HeBackward"] = _scaled(I.calc_normal_std_he_backward, _layout)
    _SCALED[f"Normal{_tag}Glorot"] = _scaled(I.calc_normal_std_glorot, _layout)
    _SCALED[f"Uniform{_tag}Glorot"] = _scaled(None, _layout, uniform=True)


class NetworkGraph:
    """A network read from an NNP ``Network`` message.

    Attributes:
        name (str), batch_size (int), proto (nnabla_pb2.Network),
        variables (OrderedDict): Buffer variables, name -> :class:`NetworkVariable`.
        parameters (OrderedDict): Parameter variables, name -> :class:`NetworkVariable`.
        functions (OrderedDict): name -> :class:`NetworkFunction`.
        inputs (list of str): buffers no function writes and some function reads.
        outputs (list of str): buffers a function writes and none reads.
    """

    def __init__(self, proto, where="", batch_size=None):
        if has_loop_control(proto):
            proto = expand_loop_control(proto)
        self.proto = proto
        self.name = proto.name
        self.batch_size = batch_size if batch_size else proto.batch_size
        self.where = f"{where}network {proto.name!r}: "
        # Declared shapes are checked against the computed ones in fixed-shape networks.
        # Network passes may change arguments (pooling windows, output sizes) without
        # updating the declared shapes downstream, as nnabla's models rely on; and in a
        # network saved with a variable batch size nnabla rewrites reshape/broadcast shapes
        # with the placeholder but leaves some declared shapes as they were at saving time
        # (a broadcast after a base_axis=2 convolution), so there the computed shapes rule.
        self.check_shapes = not any(d < 1 for v in proto.variable for d in v.shape.dim)
        self.variables, self.parameters = OrderedDict(), OrderedDict()
        for message in proto.variable:
            self._declare(NetworkVariable(message))
        self.functions = OrderedDict()
        for message in proto.function:
            if message.name in self.functions:
                raise NnpFormatError(f"{self.where}function name {message.name!r} is used "
                                     f"twice")
            spec_of(message.type, f"{self.where}function {message.name!r}: ")
            self.functions[message.name] = NetworkFunction(message)
        self.refresh()

    def _declare(self, var):
        if var.type not in ("Buffer", "Parameter"):
            raise NnpFormatError(f"{self.where}variable {var.name!r} has type {var.type!r}; "
                                 f"expected 'Buffer' or 'Parameter'")
        if var.name in self.variables or var.name in self.parameters:
            raise NnpFormatError(f"{self.where}variable {var.name!r} is declared twice")
        (self.variables if var.type == "Buffer" else self.parameters)[var.name] = var

    def get(self, name, function=None):
        """The variable ``name`` (buffer or parameter), or an error naming the function."""
        var = self.variables.get(name) or self.parameters.get(name)
        if var is None:
            user = f"function {function!r} uses " if function else ""
            raise NnpFormatError(f"{self.where}{user}variable {name!r}, which the network "
                                 f"does not declare")
        return var

    def refresh(self):
        """Re-read parents, readers, inputs and outputs from the function messages."""
        for var in self.all_variables():
            var.parent, var.required = None, []
        for f in self.functions.values():
            if f.disabled:
                continue
            for name in f.proto.input:
                self.get(name, f.name).required.append(f.name)
            for name in f.proto.output:
                var = self.get(name, f.name)
                if var.parent is not None:
                    raise NnpFormatError(f"{self.where}variable {name!r} is written by both "
                                         f"{var.parent!r} and {f.name!r}")
                var.parent = f.name
        self.inputs = [k for k, v in self.variables.items() if v.parent is None and v.required]
        self.outputs = [k for k, v in self.variables.items() if v.parent and not v.required]

    def all_variables(self):
        return list(self.variables.values()) + list(self.parameters.values())

    def forward_sequence(self):
        """Enabled functions, each after the functions writing its inputs (file order kept
        where the file is already ordered)."""
        order, state = [], {}
        for f in self.functions.values():
            if f.disabled or f.name in state:
                continue
            stack = [(f, iter(f.proto.input))]
            state[f.name] = "open"
            while stack:
                current, names = stack[-1]
                for name in names:
                    parent = self.get(name, current.name).parent
                    if parent is None:
                        continue
                    if state.get(parent) == "open":
                        raise NnpFormatError(f"{self.where}the functions form a cycle through "
                                             f"variable {name!r}")
                    if parent not in state:
                        state[parent] = "open"
                        stack.append((self.functions[parent],
                                      iter(self.functions[parent].proto.input)))
                        break
                else:
                    stack.pop()
                    state[current.name] = "done"
                    order.append(current)
        return order

    def execute_on_proto(self, execute):
        """Call ``execute(function)`` for each enabled function (a
        :class:`NetworkFunction`: ``name``, ``type``, ``inputs``, ``outputs``, ``args``),
        each after the functions writing its inputs, as nnabla's networks do."""
        for f in self.forward_sequence():
            execute(f)

    # -- building the computation graph ---------------------------------------------------
    def concrete_shape(self, var, batch_size):
        """``var``'s shape with placeholder dimensions (< 1) replaced by ``batch_size``."""
        return tuple(d if d >= 1 else batch_size for d in var.shape)

    def build(self, batch_size=None, rng=None, allow_missing=False, scope=None):
        """Create the computation graph; sets every ``variable_instance``.

        Args:
            batch_size (int, optional): replaces placeholder dimensions (default: the
                network's own ``batch_size``).
            rng (numpy.random.RandomState, optional): for parameter initializers.
            allow_missing (bool): create parameters the scope lacks (from their initializer,
                else zeros) instead of raising.
            scope (OrderedDict, optional): the parameter scope; the current one when None.

        Raises:
            NnpFormatError: missing parameters, shape mismatches (naming the network,
                function and variable).
        """
        from .. import parameter as P

        batch_size = batch_size if batch_size else (self.batch_size or 1)
        rng = rng if rng is not None else np.random.RandomState(0)
        order = self.forward_sequence()
        with P.parameter_scope("", scope if scope is not None else P.current_scope):
            for name in self.inputs:
                var = self.variables[name]
                if var.variable_instance is None:
                    var.variable_instance = _new_input(var, self.concrete_shape(var, batch_size),
                                                       rng)
            for f in order:
                if any(self.get(n).stop for n in f.proto.input):
                    for n in f.proto.output:
                        self.get(n).stop = True
                    continue
                self._call(f, batch_size, rng, allow_missing)
        self._prune_stopped()

    def _prune_stopped(self):
        stopped = [f for f in self.functions.values()
                   if any(self.get(n).stop for n in f.proto.input)]
        if stopped:
            for f in stopped:
                f.disabled = True
            self.refresh()

    def _parameter(self, var, rng, allow_missing):
        from .. import parameter as P

        existing = P.get_parameter(var.name)
        if existing is None and not allow_missing and _initializer(var.proto, rng) is None:
            raise NnpFormatError(f"{self.where}parameter {var.name!r} is neither in the "
                                 f"parameters loaded nor has an initializer")
        if existing is not None and tuple(existing.shape) != var.shape:
            raise NnpFormatError(f"{self.where}parameter {var.name!r} is declared with shape "
                                 f"{var.shape}; the loaded one has {tuple(existing.shape)}")
        view = P.get_parameter_or_create(var.name, var.shape, _initializer(var.proto, rng))
        view.need_grad = var.need_grad
        return view

    def _call(self, f, batch_size, rng, allow_missing):
        where = f"{self.where}function {f.name!r} ({f.type}): "
        spec = spec_of(f.type, where)
        args = read_arguments(f.proto, where)
        if "shape" in args and args["shape"] and args["shape"][0] < 0:
            args["shape"] = (batch_size,) + tuple(args["shape"][1:])
        present = []
        for name in f.proto.input:
            var = self.get(name, f.name)
            if var.type == "Parameter":
                var.variable_instance = self._parameter(var, rng, allow_missing)
            elif var.variable_instance is None:
                raise NnpFormatError(f"{where}input {name!r} has no value")
            present.append(var.variable_instance)
        inputs = place_inputs(spec, args, present, where=where)
        try:
            result = call(spec, tuple(inputs), args, len(f.proto.output), None)
        except (ValueError, TypeError, RuntimeError) as error:
            raise NnpFormatError(f"{where}{error}") from None
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(f.proto.output):
            raise NnpFormatError(f"{where}the file lists {len(f.proto.output)} outputs; the "
                                 f"function gives {len(result)}")
        for name, value in zip(f.proto.output, result):
            var = self.get(name, f.name)
            declared = self.concrete_shape(var, batch_size)
            if (self.check_shapes and not spec.dynamic_shape
                    and tuple(value.shape) != declared):
                raise NnpFormatError(f"{where}output {name!r} is declared with shape "
                                     f"{declared}; the function computes {tuple(value.shape)}")
            var.variable_instance = value
            value.name = name


def _new_input(var, shape, rng):
    from .._variable import Variable

    init = _initializer(var.proto, rng)
    if init is not None:
        return Variable.from_numpy_array(init(shape=shape), need_grad=True)
    return Variable(shape)
