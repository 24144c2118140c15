"""Proto variables and proto functions: what F/PF calls record under ``nn.graph_def``.

An ``F.*`` call with a :class:`ProtoVariable` among its inputs does not compute anything:
it checks the arguments and infers the output shapes from the function spec (as a graph
call would), records a :class:`ProtoFunction` into the network being built
(:func:`nnabla.core._builder.current_network`) and returns proto variables for the outputs.
Parameters (``nnabla.Variable`` inputs) are kept by identity and named when the network is
committed.
"""
from __future__ import annotations

import types
import weakref

from .. import _dispatch
from .._naming import unique_name
from .._spec.binding import bind_args, infer

# The builder F/PF calls on proto variables record into; ``new_builder`` (the
# ProtoGraphBuilder class, set by nnabla.core._builder) makes the default one.
RECORDING = types.SimpleNamespace(builder=None, new_builder=None)


def current_graph_builder():
    """The builder F/PF calls on proto variables record into."""
    if RECORDING.builder is None:
        RECORDING.builder = RECORDING.new_builder()
    return RECORDING.builder


def current_network():
    """The network being recorded."""
    return current_graph_builder().get_current()


def current_module():
    """The module being recorded."""
    return current_graph_builder().get_module()


class ProtoVariable:
    """A variable of a proto network: a shape and a name, no data.

    Passing proto variables to ``F``/``PF`` functions (or to a :class:`nnabla.Module`)
    records a proto network in the current graph (``nn.graph_def.graph()`` or the
    default graph) instead of computing anything.

    Args:
        shape (tuple of int): the shape.
        name (str, optional): the name in the network (default: ``<Type>_in``).
        need_grad (bool): whether a gradient is wanted.
        var_type (str): ``'Buffer'`` or ``'Parameter'``.

    Example:
        >>> import nnabla as nn, nnabla.functions as F
        >>> with nn.graph_def.graph() as g:
        ...     x = nn.ProtoVariable((2, 3))
        ...     y = F.relu(x)
        >>> y.shape, g.default_graph().outputs
        ((2, 3), ['ReLU_out'])
    """

    _is_proto_variable = True

    def __init__(self, shape, name=None, need_grad=False, var_type="Buffer"):
        self.name = name
        self.shape = tuple(shape)
        self.need_grad = need_grad
        self.parent = None
        self.required = []
        self.type = var_type
        self.info = None
        self.initializer = None
        self.variable_instance = None
        self.repeat_id = []
        self.stop = False
        self.delegate = None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        size = 1
        for d in self.shape:
            size *= d
        return size

    def clone(self):
        """A copy sharing the initializer and the built variable."""
        v = ProtoVariable(self.shape, self.name, self.need_grad, self.type)
        v.parent, v.required = self.parent, list(self.required)
        v.initializer, v.info = self.initializer, self.info
        v.variable_instance = self.variable_instance
        v.repeat_id = list(self.repeat_id)
        return v

    @property
    def proto(self):
        """This variable as an ``nnabla_pb2.Variable`` message (a new one each time)."""
        from ..utils import nnabla_pb2

        message = nnabla_pb2.Variable(name=self.name or "", type=self.type)
        message.repeat_id.extend(self.repeat_id)
        message.shape.dim.extend(int(d) for d in self.shape)
        kind = type(self.initializer).__name__.replace("Initializer", "")
        multipliers = {"Constant": lambda i: i.value, "Uniform": lambda i: -i.lim[0],
                       "Normal": lambda i: i.sigma}
        if self.initializer is not None and kind in multipliers:
            message.initializer.type = kind
            message.initializer.multiplier = float(multipliers[kind](self.initializer))
        return message

    def __repr__(self):
        return f"ProtoVariable(name={self.name!r}, shape={self.shape}, type={self.type!r})"

    # Arithmetic records the functions nnabla's ProtoVariable operators record.
    def __pos__(self):
        return self

    def __neg__(self):
        from .. import functions as F
        return F.mul_scalar(self, -1.0)

    def __add__(self, other):
        from .. import functions as F
        return F.add2(self, other) if _is_variable(other) else F.add_scalar(self, other)

    def __radd__(self, other):
        from .. import functions as F
        return F.add_scalar(self, other)

    def __sub__(self, other):
        from .. import functions as F
        return F.sub2(self, other) if _is_variable(other) else F.add_scalar(self, -other)

    def __rsub__(self, other):
        from .. import functions as F
        return F.r_sub_scalar(self, other)

    def __mul__(self, other):
        from .. import functions as F
        return F.mul2(self, other) if _is_variable(other) else F.mul_scalar(self, other)

    def __rmul__(self, other):
        from .. import functions as F
        return F.mul_scalar(self, other)

    def __truediv__(self, other):
        from .. import functions as F
        return (F.div2(self, other) if _is_variable(other)
                else F.mul_scalar(self, 1.0 / other))

    def __rtruediv__(self, other):
        from .. import functions as F
        return F.r_div_scalar(self, other)

    def __pow__(self, other, modulo=None):
        from .. import functions as F
        return F.pow2(self, other) if _is_variable(other) else F.pow_scalar(self, other)

    def __rpow__(self, other):
        from .. import functions as F
        return F.r_pow_scalar(self, other)


def _is_variable(x):
    from .._variable import Variable
    return isinstance(x, (ProtoVariable, Variable))


class ProtoFunction:
    """A function of a proto network.

    Attributes:
        name (str): unique in its network (``Convolution``, ``@conv_bn/Convolution_1``).
        type (str): the function type (``'Convolution'``).
        args (dict): every argument of the function.
        inputs, outputs (list of str): names of its variables in the network.
    """

    def __init__(self, func, f_type, args, name=None, owner=None):
        self.type = f_type
        if name is None:
            self.path_name = current_module().get_path_name()
            prefix = f"{self.path_name}/{f_type}" if self.path_name else f_type
            self.name = unique_name(current_network().func_names, prefix)
            self.owner = weakref.ref(current_network())
        else:
            self.path_name = ""
            self.name = name
            self.owner = weakref.ref(owner)
        self.args = dict(args) if args is not None else {}
        self.inputs, self.outputs = [], []
        self.function_instance = func
        self.repeat_id, self.repeat_param, self.recurrent_param = [], None, None
        self.disabled = False
        self.delegate = None

    def __getitem__(self, item):
        return self.__dict__[item]

    def __repr__(self):
        return f"ProtoFunction(name={self.name!r}, type={self.type!r})"

    def clone(self, owner):
        """A copy belonging to network ``owner``."""
        f = ProtoFunction(None, self.type, dict(self.args), self.name, owner)
        f.inputs, f.outputs = list(self.inputs), list(self.outputs)
        f.repeat_id, f.repeat_param = self.repeat_id, self.repeat_param
        f.recurrent_param, f.disabled = self.recurrent_param, self.disabled
        return f

    @property
    def proto(self):
        """This function as an ``nnabla_pb2.Function`` message."""
        from ..utils import _nnp_functions, nnabla_pb2

        message = nnabla_pb2.Function(name=self.name, type=self.type)
        message.input.extend(self.inputs)
        message.output.extend(self.outputs)
        message.repeat_id.extend(self.repeat_id)
        _nnp_functions.write_arguments(message, self.type, self.args)
        return message

    # -- recording ------------------------------------------------------------------------
    def _join(self, name):
        return f"{self.path_name}/{name}" if self.path_name else name

    def _record_input(self, network, v, index):
        from .._variable import Variable

        if isinstance(v, Variable):
            key = _parameter_key(v)
            network.parameters[key] = v
            self.inputs.append(key)
            return
        known = next((k for k, pv in network.variables.items() if pv is v), None)
        if known is None:
            if v.name is not None:
                known = v.name
            else:
                known = v.name = unique_name(network.var_names, self._join(f"{self.type}_in"))
            network.variables[known] = v
        v.required.append(self.name)
        self.inputs.append(known)

    def _record_outputs(self, network, out_shapes):
        renaming = getattr(network, "renaming", None)
        for i, shape in enumerate(out_shapes):
            name = self._join(f"{self.type}_out")
            renamed = False
            if renaming is not None:
                wanted = renaming(i, name)
                renamed, name = wanted != name, wanted
            unique = unique_name(network.var_names, name)
            if renamed and unique != name:
                raise ValueError(f"nn.graph_def: the variable name {name!r} is given twice; "
                                 f"names must be unique in a network")
            pv = network.variables[unique] = ProtoVariable(shape, unique, False, "Buffer")
            pv.parent = self.name
            self.outputs.append(unique)

    def record(self, inputs, out_shapes):
        """Add this function with ``inputs`` (proto variables or parameters) to its network.

        Returns:
            ProtoVariable or tuple of them: the outputs.
        """
        network = self.owner()
        for index, v in enumerate(inputs):
            self._record_input(network, v, index)
        self._record_outputs(network, out_shapes)
        network.functions[self.name] = self
        current_graph_builder().dirty()
        outputs = tuple(network.variables[k] for k in self.outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    # -- running --------------------------------------------------------------------------
    def graph_call(self, **kwargs):
        """Create this function on the built input variables; sets the outputs'
        ``variable_instance``.

        Args:
            batch_size (int): replaces a leading ``-1`` of a ``shape`` argument.
        """
        from .. import parameter as P
        from .._spec import SPECS
        from ..utils._nnp_functions import place_inputs

        network = self.owner()
        batch_size = kwargs.get("batch_size") or 1
        present = []
        for k in self.inputs:
            pv = network.variables[k] if k in network.variables else network.parameters[k]
            if pv.type == "Parameter":
                pv.variable_instance = P.get_parameter_or_create(pv.name, pv.shape,
                                                                 pv.initializer)
                pv.variable_instance.need_grad = pv.need_grad
            elif pv.variable_instance is None:
                raise ValueError(f"nn.graph_def: function {self.name!r} ({self.type}): "
                                 f"input variable {pv.name!r} has no value")
            present.append(pv.variable_instance)
        spec = SPECS[self.type]
        args = dict(self.args)
        shape = args.get("shape")
        if isinstance(shape, (list, tuple)) and shape and shape[0] is not None and shape[0] < 0:
            args["shape"] = (batch_size,) + tuple(shape[1:])
        placed = place_inputs(spec, args, present,
                              where=f"nn.graph_def: function {self.name!r}: ")
        result = _dispatch.call(spec, tuple(placed), args, len(self.outputs))
        result = result if isinstance(result, tuple) else (result,)
        for name, value in zip(self.outputs, result):
            network.variables[name].variable_instance = value

    def __call__(self, inputs, n_outputs=-1):
        return record_inputs(self, inputs, n_outputs)


def _parameter_key(v):
    return f"@parameter:{id(v._node.data)}"


def record_inputs(function, inputs, n_outputs):
    """Infer the output shapes of ``function`` on ``inputs`` (None for an absent optional
    input) and record it."""
    from .._spec import SPECS

    spec = SPECS[function.type]
    shapes = [None if v is None else tuple(v.shape) for v in inputs]
    _, out_shapes = infer(spec, shapes, bind_args(spec, function.args), n_outputs)
    return function.record([v for v in inputs if v is not None], out_shapes)


def record_call(spec, inputs, kw, n_outputs=-1):
    """What ``F.<name>`` does when an input is a :class:`ProtoVariable` (called by the
    dispatcher): check the call, infer the output shapes, record a :class:`ProtoFunction`.
    """
    shapes = [None if v is None else tuple(v.shape) for v in inputs]
    args, out_shapes = infer(spec, shapes, bind_args(spec, kw), n_outputs)
    function = ProtoFunction(None, spec.name, args)
    result = function.record([v for v in inputs if v is not None], out_shapes)
    if isinstance(result, tuple) or spec.outputs[-1].variadic:
        return result if isinstance(result, tuple) else (result,)
    return result


_dispatch.proto_recorder = record_call
