"""Function messages of the NNP format: arguments to and from ``<snake>_param`` fields.

Everything here is derived from the function spec (:data:`nnabla._spec.SPECS`) and the
schema's argument types (:func:`nnabla.utils._nnp_schema.argument_type`): a ``Shape``
argument is written as ``dim`` values, a ``repeated`` one as a list, a scalar as the field
itself, and the communicator of SyncBatchNormalization is not stored (nnabla stores an
empty message). :func:`place_inputs` puts the inputs an NNP function lists (present ones
only, as nnabla writes them) at their positions in the spec.

Example:
    >>> from nnabla.utils import nnabla_pb2, _nnp_functions
    >>> f = nnabla_pb2.Function(name="conv", type="Convolution")
    >>> _nnp_functions.write_arguments(f, "Convolution", {"base_axis": 1, "pad": (1, 1),
    ...     "stride": (1, 1), "dilation": (1, 1), "group": 1, "channel_last": False})
    >>> _nnp_functions.read_arguments(f)["pad"]
    (1, 1)
"""
from __future__ import annotations

from .._spec import SPECS
from . import _nnp_schema


class NnpFormatError(ValueError):
    """An NNP file (or one of its members) does not describe a valid network."""


def spec_of(type_name, where=""):
    """The spec of function type ``type_name``, or :class:`NnpFormatError` naming ``where``."""
    spec = SPECS.get(type_name)
    if spec is None:
        raise NnpFormatError(f"{where}unknown function type {type_name!r}")
    return spec


def parameter_field(spec):
    """Name of the ``Function`` oneof field holding ``spec``'s arguments."""
    return f"{spec.snake}_param"


def _proto_types(spec):
    return [(arg, _nnp_schema.argument_type(spec, arg)) for arg in spec.args]


def write_arguments(function_proto, type_name, args):
    """Store ``args`` (a dict of spec argument values) in ``function_proto``'s parameter.

    Args:
        function_proto (nnabla_pb2.Function): the message to fill.
        type_name (str): the function type (``'Convolution'``).
        args (dict): argument name -> value, every argument of the spec.

    Raises:
        NnpFormatError: for an unknown type or a value the field cannot hold (``None``
            inside a list).
    """
    spec = spec_of(type_name)
    if not spec.args:
        return
    param = getattr(function_proto, parameter_field(spec))
    param.SetInParent()
    for arg, proto_type in _proto_types(spec):
        value = args.get(arg.name)
        if value is None or proto_type == "Communicator":
            continue
        if proto_type == "Shape":
            getattr(param, arg.name).dim.extend(_list(spec, arg, value))
        elif proto_type.startswith("repeated "):
            getattr(param, arg.name).extend(_list(spec, arg, value))
        else:
            setattr(param, arg.name, value)


def _list(spec, arg, value):
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if any(v is None for v in values):
        raise NnpFormatError(f"{spec.api_name}: argument '{arg.name}' = {value!r} holds None; "
                             f"the NNP format cannot store it")
    return values


def read_arguments(function_proto, where=""):
    """The arguments stored in ``function_proto``, converted to the spec's kinds.

    A missing parameter message reads as the schema's defaults (zeros), as in nnabla.

    Returns:
        dict: argument name -> value (tuples for lists; ``None`` for the communicator).
    """
    spec = spec_of(function_proto.type, where)
    if not spec.args:
        return {}
    param = getattr(function_proto, parameter_field(spec))
    args = {}
    for arg, proto_type in _proto_types(spec):
        if proto_type == "Communicator":
            args[arg.name] = None
            continue
        value = getattr(param, arg.name)
        if proto_type == "Shape":
            value = tuple(int(v) for v in value.dim)
        elif proto_type.startswith("repeated "):
            value = tuple(value)
        if value == () and (spec.name, arg.name) in _EMPTY_IS_DEFAULT:
            args[arg.name] = arg.default
            continue
        args[arg.name] = _scalar(arg.kind.rstrip("?"), value)
    return args


# Arguments nnabla's kernels fill in when a file stores them empty (files written before
# the argument existed): the spec's input-dependent default (None) then applies.
_EMPTY_IS_DEFAULT = {("Deconvolution", "output_padding")}


def _scalar(kind, value):
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    if kind == "float":
        return float(value)
    if kind == "floats":
        return tuple(float(v) for v in value)
    if kind in ("ints", "optints"):
        return tuple(int(v) for v in value)
    return value


# Functions whose absent optional inputs are not simply the trailing ones: which optional
# inputs are missing follows from their arguments (and, where nnabla decides by rank, from
# the shapes), as nnabla's kernels decide it.
def _normalization_absent(args, n_present, names):
    absent = set()
    if args.get("no_bias"):
        absent.add("beta")
    if args.get("no_scale"):
        absent.add("gamma")
    return absent


def _recurrent_absent(args, n_present, names):
    return {"weight"} if args.get("num_layers", 1) == 1 else set()


_ABSENT_RULES = {name: _normalization_absent for name in (
    "BatchNormalization", "LayerNormalization", "InstanceNormalization",
    "GroupNormalization", "TensorNormalization")}
_ABSENT_RULES.update({name: _recurrent_absent for name in ("RNN", "LSTM", "GRU")})


def _by_rank(spec, present_shapes):
    """Positions for the functions whose kernels tell optional inputs apart by rank."""
    n = len(present_shapes)
    if spec.name == "DeformableConvolution" and n == 4:
        return [0, 1, 2, 4 if len(present_shapes[3]) == 1 else 3]
    if spec.name == "FusedConvolution":
        table = {2: [0, 1], 4: [0, 1, 2, 7], 6: [0, 1, 3, 4, 5, 6],
                 7: [0, 1, 3, 4, 5, 6, 7]}
        if n == 3:
            return [0, 1, 2 if len(present_shapes[2]) == 1 else 7]
        return table.get(n)
    return None


def place_inputs(spec, args, present, shape_of=None, where=""):
    """Put the ``present`` inputs of an NNP function at their spec positions.

    Args:
        spec: the function's spec.
        args (dict): its arguments (``no_bias``, ``num_layers`` ... decide what is absent).
        present (list): the inputs the file lists, in order.
        shape_of (callable): the shape of one input (used where ranks decide).

    Returns:
        list: one entry per spec input (all given ones for variadic functions), ``None``
        where an optional input is absent.

    Raises:
        NnpFormatError: if the count does not fit the spec.
    """
    if spec.variadic_input:
        return list(present)
    total = len(spec.inputs)
    required = sum(not i.optional for i in spec.inputs)
    if not required <= len(present) <= total:
        raise NnpFormatError(
            f"{where}{spec.name} takes {required} to {total} inputs; the file lists "
            f"{len(present)}")
    if len(present) == total:
        return list(present)
    shape_of = shape_of or (lambda v: tuple(v.shape))
    positions = _by_rank(spec, [shape_of(v) for v in present])
    if positions is None:
        rule = _ABSENT_RULES.get(spec.name)
        absent = rule(args, len(present), spec.input_names) if rule else set()
        slots = [i for i, inp in enumerate(spec.inputs) if inp.name not in absent]
        positions = slots[:len(present)]
    placed = [None] * total
    for position, value in zip(positions, present):
        placed[position] = value
    return placed
