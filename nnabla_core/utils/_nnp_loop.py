"""Loop control of Neural Network Console networks, unrolled into plain NNP networks.

Neural Network Console writes repeated blocks and recurrent networks with loop control:
``repeat_info`` entries (an id and a count) in the network, a ``repeat_id`` list on the
variables and functions inside a loop, and five function types that only mark the loop:

- ``RepeatStart(x, y)`` / ``RepeatEnd(y)``: the functions between them run ``times`` times,
  each pass reading the previous pass's output (the first one reads ``x``);
- ``RecurrentInput(x)``: split ``x`` along ``recurrent_param.axis``, one slice per step;
- ``RecurrentOutput(y)``: stack the steps' ``y`` along that axis;
- ``Delay(y, initial)``: the previous step's ``y`` (``initial`` at the first step).

:func:`expand_loop_control` gives the equivalent network without loop control, as nnabla
unrolls it: every variable and function inside a loop is repeated once per index, named
after it (``name_<id>[i]``, or with ``{<id>}`` in the name replaced by ``[i]``); the loop
markers become ``Identity`` (named ``$EC$/...``), ``Split`` and ``Stack`` functions.

Example:
    >>> from google.protobuf import text_format
    >>> from nnabla.utils import nnabla_pb2
    >>> net = text_format.Parse('''
    ...   name: "n" batch_size: 1 repeat_info { id: "R" times: 2 }
    ...   variable { name: "x" type: "Buffer" shape { dim: 1 dim: 2 } }
    ...   variable { name: "s" type: "Buffer" repeat_id: "R" shape { dim: 1 dim: 2 } }
    ...   variable { name: "t" type: "Buffer" repeat_id: "R" shape { dim: 1 dim: 2 } }
    ...   variable { name: "y" type: "Buffer" shape { dim: 1 dim: 2 } }
    ...   function { name: "start" type: "RepeatStart" repeat_id: "R" input: "x" input: "t"
    ...              output: "s" repeat_param { repeat_id: "R" times: 2 } }
    ...   function { name: "twice" type: "MulScalar" repeat_id: "R" input: "s" output: "t"
    ...              mul_scalar_param { val: 2 } }
    ...   function { name: "end" type: "RepeatEnd" input: "t" output: "y"
    ...              repeat_param { repeat_id: "R" times: 2 } }''', nnabla_pb2.Network())
    >>> [(f.type, list(f.input), list(f.output)) for f in expand_loop_control(net).function]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('Identity', ['x'], ['s_R[0]']), ('Identity', ['t_R[0]'], ['s_R[1]']),
     ('MulScalar', ['s_R[0]'], ['t_R[0]']), ('MulScalar', ['s_R[1]'], ['t_R[1]']),
     ('Identity', ['t_R[1]'], ['y'])]
"""
from __future__ import annotations

import itertools

from . import nnabla_pb2
from ._nnp_functions import NnpFormatError

LOOP_CONTROL = ("RepeatStart", "RepeatEnd", "RecurrentInput", "RecurrentOutput", "Delay")


def has_loop_control(network):
    """Whether the ``Network`` message uses loop control."""
    return bool(len(network.repeat_info)) or any(
        f.type in LOOP_CONTROL or len(f.repeat_id) for f in network.function)


def _suffix(ids, index):
    return "".join(f"_{rid}[{i}]" for rid, i in zip(ids, index))


class _Unroller:
    def __init__(self, network):
        self.source = network
        self.where = f"network {network.name!r}: "
        self.times = {}
        for r in network.repeat_info:
            if r.times < 1:
                raise NnpFormatError(f"{self.where}repeat {r.id!r} has times {r.times}; "
                                     f"expected at least 1")
            self.times[r.id] = int(r.times)
        self.declared = {v.name: v for v in network.variable}
        self.names = set()

    def indices(self, ids, owner):
        for rid in ids:
            if rid not in self.times:
                raise NnpFormatError(f"{self.where}{owner} uses repeat id {rid!r}, which "
                                     f"repeat_info does not define")
        return itertools.product(*(range(self.times[rid]) for rid in ids))

    def variables(self, out):
        for v in self.source.variable:
            for index in self.indices(v.repeat_id, f"variable {v.name!r}"):
                name = v.name
                for rid, i in zip(v.repeat_id, index):
                    marker = "{" + rid + "}"
                    name = (name.replace(marker, f"[{i}]") if marker in name
                            else f"{name}_{rid}[{i}]")
                copy = out.variable.add()
                copy.CopyFrom(v)
                copy.name = name
                del copy.repeat_id[:]
                self.names.add(name)

    def functions(self, out):
        for f in self.source.function:
            for index in self.indices(f.repeat_id, f"function {f.name!r}"):
                self.function(out, f, index)

    def _resolve(self, name, full, low):
        if name in self.names:
            return name
        return name + full if name + full in self.names else name + low

    def _loop_id(self, f, param):
        rid = getattr(f, param).repeat_id
        if rid not in self.times:
            raise NnpFormatError(f"{self.where}function {f.name!r} ({f.type}) names repeat id "
                                 f"{rid!r}, which repeat_info does not define")
        return rid

    def _count(self, f, n):
        if len(f.input) != n:
            raise NnpFormatError(f"{self.where}function {f.name!r} ({f.type}) takes {n} "
                                 f"input(s); the file lists {len(f.input)}")

    def function(self, out, f, index):
        full, low = _suffix(f.repeat_id, index), _suffix(f.repeat_id[:-1], index[:-1])
        name, kind, args = f.name + full, f.type, None
        if f.type in ("RepeatStart", "Delay"):
            self._count(f, 2)
            param = "repeat_param" if f.type == "RepeatStart" else "recurrent_param"
            rid = self._loop_id(f, param)
            if not index:
                raise NnpFormatError(f"{self.where}function {f.name!r} ({f.type}) must be "
                                     f"inside loop {rid!r} (have a repeat_id)")
            if index[-1] == 0:
                start = f.input[0] if f.type == "RepeatStart" else f.input[1]
                inputs = [start if start in self.names else start + low]
            else:
                step = f.input[1] if f.type == "RepeatStart" else f.input[0]
                inputs = [f"{step}{low}_{rid}[{index[-1] - 1}]"]
            name, kind = "$EC$/" + name, "Identity"
        elif f.type == "RepeatEnd":
            self._count(f, 1)
            rid = self._loop_id(f, "repeat_param")
            inputs = [f"{f.input[0]}{full}_{rid}[{self.times[rid] - 1}]"]
            name, kind = "$EC$/" + name, "Identity"
        elif f.type == "RecurrentInput":
            if index and index[-1] > 0:
                return
            self._count(f, 1)
            name, kind, args = f.name + low, "Split", ("split_param", f.recurrent_param.axis)
            inputs = [v if v in self.names else v + low for v in f.input]
        elif f.type == "RecurrentOutput":
            self._count(f, 1)
            rid = self._loop_id(f, "recurrent_param")
            inputs = [f"{f.input[0]}{full}_{rid}[{t}]"
                      for t in range(f.recurrent_param.length)]
            kind, args = "Stack", ("stack_param", f.recurrent_param.axis)
        else:
            inputs = []
            for v in f.input:
                for rid, i in zip(f.repeat_id, index):
                    v = v.replace("{" + rid + "}", f"[{i}]")
                inputs.append(self._resolve(v, full, low))
        outputs = self._outputs(f, full, low)
        message = out.function.add()
        if kind == f.type:
            message.CopyFrom(f)
            del message.repeat_id[:], message.input[:], message.output[:]
        else:
            message.type = kind
            if f.HasField("context"):
                message.context.CopyFrom(f.context)
            if args is not None:
                getattr(message, args[0]).axis = args[1]
        message.name = name
        message.input.extend(inputs)
        message.output.extend(outputs)

    def _outputs(self, f, full, low):
        if f.type != "RecurrentInput":
            return [v + full if v + full in self.names else v for v in f.output]
        source = self.declared.get(f.input[0]) if len(f.input) else None
        axis = f.recurrent_param.axis
        if source is None or not 0 <= axis < len(source.shape.dim):
            raise NnpFormatError(f"{self.where}function {f.name!r} (RecurrentInput) splits "
                                 f"axis {axis} of {list(f.input)}, which has no such axis")
        rid = f.recurrent_param.repeat_id
        return [f"{f.output[0]}{low}_{rid}[{t}]" for t in range(source.shape.dim[axis])]


def expand_loop_control(network):
    """The ``Network`` message ``network`` with its loop control unrolled (a new message;
    ``network`` itself is unchanged).

    Raises:
        NnpFormatError: for repeat ids no ``repeat_info`` defines, loop markers with the
            wrong number of inputs or outside their loop.
    """
    out = nnabla_pb2.Network(name=network.name, batch_size=network.batch_size)
    unroller = _Unroller(network)
    unroller.variables(out)
    unroller.functions(out)
    return out
