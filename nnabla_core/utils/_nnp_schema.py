"""The NNP schema (nnabla's ``nnabla.proto``), built from the function spec at import time.

The schema has fixed messages (networks, variables, parameters, datasets, optimizers,
monitors, executors), written below as data, and one ``<Type>Parameter`` message per
function with arguments and per solver. Those come from the function spec
(:data:`nnabla._spec.SPECS`: names, argument names and order, kinds) and the wire facts
the spec does not hold (:mod:`nnabla._spec.wire`: field numbers, proto types that differ
from an argument kind's). No protoc is involved: :func:`file_descriptor` builds the
``FileDescriptorProto`` directly, exactly as protoc would compile the text that
``tools/gen_nnabla_proto.py`` prints from the same :func:`messages`.

Example:
    >>> from nnabla.utils import _nnp_schema
    >>> affine = next(m for m in _nnp_schema.messages() if m.name == "AffineParameter")
    >>> affine.fields
    (Field(type='int64', name='base_axis', number=1, comment='', packed=False),)
"""
from __future__ import annotations

from typing import NamedTuple

from google.protobuf import descriptor_pb2

from .._spec import SPECS, wire
from .._spec.solvers import SPECS as SOLVER_SPECS


class Field(NamedTuple):
    """One field; ``type`` is spelled as in a .proto file (``"repeated int64"``, ``"Shape"``,
    ``"map<string, SolverState>"``)."""

    type: str
    name: str
    number: int
    comment: str = ""
    packed: bool = False


class Oneof(NamedTuple):
    """A ``oneof`` group of fields; :func:`messages` fills ``PARAMETERS``' fields."""

    name: str
    fields: tuple = ()


class Message(NamedTuple):
    """One message: its :class:`Field` and :class:`Oneof` items in declaration order."""

    name: str
    fields: tuple
    comment: str = ""


# Where a Solver or Function message holds its one <snake>_param field per solver or function.
PARAMETERS = Oneof("parameter")
_OBSOLETE = "obsolete; kept for old files"

# Transcribed from nnabla 1.39.0's nnabla.proto; names, numbers, types and order are the
# wire format's. The parameter messages of the solvers follow Solver, the functions' Function.
FIXED = (
    Message("Shape", (Field("repeated int64", "dim", 1, packed=True),)),
    Message("Communicator", ()),
    Message("Context", (
        Field("repeated string", "backends", 1),
        Field("string", "array_class", 2),
        Field("string", "device_id", 3),
        Field("string", "backend", 4, _OBSOLETE),
        Field("string", "compute_backend", 5, _OBSOLETE),
    )),
    Message("NNablaProtoBuf", (
        Field("string", "version", 1),
        Field("GlobalConfig", "global_config", 2),
        Field("TrainingConfig", "training_config", 10),
        Field("repeated Network", "network", 100),
        Field("repeated Parameter", "parameter", 200),
        Field("repeated Dataset", "dataset", 300),
        Field("repeated Optimizer", "optimizer", 400),
        Field("repeated Monitor", "monitor", 500),
        Field("repeated Executor", "executor", 600),
    ), comment="The root of an .nnp archive's .nntxt/.protobuf member."),
    Message("GlobalConfig", (Field("Context", "default_context", 1),)),
    Message("TrainingConfig", (
        Field("int64", "max_epoch", 1),
        Field("int64", "iter_per_epoch", 2),
        Field("bool", "save_best", 100),
        Field("int64", "monitor_interval", 200),
    )),
    Message("Network", (
        Field("string", "name", 1),
        Field("int64", "batch_size", 10),
        Field("repeated RepeatInfo", "repeat_info", 11),
        Field("repeated Variable", "variable", 100),
        Field("repeated Function", "function", 200),
    )),
    Message("RepeatInfo", (Field("string", "id", 1), Field("int64", "times", 2))),
    Message("RepeatParameter", (Field("string", "repeat_id", 1), Field("int64", "times", 2))),
    Message("RecurrentParameter", (
        Field("string", "repeat_id", 1),
        Field("int64", "length", 2),
        Field("int64", "axis", 3),
    )),
    Message("Variable", (
        Field("string", "name", 1),
        Field("string", "type", 2, '"Buffer" or "Parameter"'),
        Field("repeated string", "repeat_id", 3),
        Field("Shape", "shape", 20),
        Field("Initializer", "initializer", 100),
    )),
    Message("Initializer", (Field("string", "type", 2), Field("float", "multiplier", 10))),
    Message("Parameter", (
        Field("string", "variable_name", 1),
        Field("Shape", "shape", 20),
        Field("repeated float", "data", 100),
        Field("bool", "need_grad", 101),
    )),
    Message("Dataset", (
        Field("string", "name", 1),
        Field("string", "type", 2),
        Field("string", "uri", 10),
        Field("int64", "batch_size", 20),
        Field("string", "cache_dir", 30),
        Field("bool", "overwrite_cache", 31),
        Field("bool", "create_cache_explicitly", 32),
        Field("bool", "shuffle", 100),
        Field("bool", "no_image_normalization", 101),
        Field("repeated string", "variable", 200),
    )),
    Message("Optimizer", (
        Field("string", "name", 1),
        Field("int64", "order", 3),
        Field("string", "network_name", 10),
        Field("repeated string", "dataset_name", 20),
        Field("Solver", "solver", 30),
        Field("int64", "update_interval", 40),
        Field("repeated DataVariable", "data_variable", 50),
        Field("repeated GeneratorVariable", "generator_variable", 60),
        Field("repeated LossVariable", "loss_variable", 70),
        Field("repeated ParameterVariable", "parameter_variable", 80),
        Field("int64", "start_iter", 100),
        Field("int64", "end_iter", 101),
    )),
    Message("SolverStateParameter", (
        Field("Shape", "shape", 20),
        Field("repeated float", "data", 100),
    )),
    Message("SolverState", (
        Field("uint32", "t", 1),
        Field("map<string, SolverStateParameter>", "state_parameter", 2),
    )),
    Message("Solver", (
        Field("string", "type", 2),
        Field("Context", "context", 10),
        Field("float", "weight_decay", 20),
        Field("map<string, SolverState>", "states", 40),
        PARAMETERS,
        Field("string", "lr_scheduler_type", 200),
        Field("PolynomialSchedulerParameter", "polynomial_scheduler_param", 210),
        Field("CosineSchedulerParameter", "cosine_scheduler_param", 211),
        Field("ExponentialSchedulerParameter", "exponential_scheduler_param", 212),
        Field("StepSchedulerParameter", "step_scheduler_param", 213),
        Field("CustomSchedulerParameter", "custom_scheduler_param", 299),
        Field("string", "lr_warmup_scheduler_type", 300),
        Field("LinearWarmupSchedulerParameter", "linear_warmup_scheduler_param", 310),
        Field("float", "lr_decay", 30, "obsolete"),
        Field("int64", "lr_decay_interval", 31, "obsolete"),
    )),
    Message("PolynomialSchedulerParameter", (
        Field("float", "max_iter", 1),
        Field("float", "power", 2),
    )),
    Message("CosineSchedulerParameter", (Field("float", "max_iter", 1),)),
    Message("ExponentialSchedulerParameter", (
        Field("float", "gamma", 1),
        Field("int64", "iter_interval", 2),
    )),
    Message("StepSchedulerParameter", (
        Field("float", "gamma", 1),
        Field("repeated int64", "iter_steps", 2),
    )),
    Message("CustomSchedulerParameter", (
        Field("float", "max_iter", 1),
        Field("string", "network_name", 10),
        Field("repeated DataVariable", "data_variable", 50),
        Field("repeated OutputVariable", "output_variable", 80),
    )),
    Message("LinearWarmupSchedulerParameter", (Field("int64", "warmup_iter", 1),)),
    Message("DataVariable", (
        Field("string", "variable_name", 1),
        Field("string", "data_name", 3),
    )),
    Message("GeneratorVariable", (
        Field("string", "variable_name", 1),
        Field("string", "type", 2),
        Field("float", "multiplier", 3),
    )),
    Message("LossVariable", (Field("string", "variable_name", 1),)),
    Message("ParameterVariable", (
        Field("string", "variable_name", 1),
        Field("float", "learning_rate_multiplier", 2),
    )),
    Message("Monitor", (
        Field("string", "name", 1),
        Field("string", "network_name", 10),
        Field("repeated string", "dataset_name", 20),
        Field("repeated DataVariable", "data_variable", 50),
        Field("repeated GeneratorVariable", "generator_variable", 60),
        Field("repeated MonitorVariable", "monitor_variable", 70),
    )),
    Message("MonitorVariable", (
        Field("string", "variable_name", 1),
        Field("string", "type", 2),
        Field("string", "data_name", 3),
        Field("float", "multiplier", 100),
    )),
    Message("Executor", (
        Field("string", "name", 1),
        Field("string", "network_name", 10),
        Field("int64", "num_evaluations", 20),
        Field("string", "repeat_evaluation_type", 21),
        Field("bool", "need_back_propagation", 30),
        Field("repeated DataVariable", "data_variable", 50),
        Field("repeated GeneratorVariable", "generator_variable", 60),
        Field("repeated LossVariable", "loss_variable", 70),
        Field("repeated OutputVariable", "output_variable", 80),
        Field("repeated ParameterVariable", "parameter_variable", 90),
        Field("bool", "no_image_normalization", 101),
    )),
    Message("OutputVariable", (
        Field("string", "variable_name", 1),
        Field("string", "type", 2),
        Field("string", "data_name", 3),
    )),
    Message("Function", (
        Field("string", "name", 1),
        Field("string", "type", 2),
        Field("repeated string", "repeat_id", 3),
        Field("Context", "context", 10),
        Field("repeated string", "input", 20),
        Field("repeated string", "output", 30),
        PARAMETERS,
        Field("RepeatParameter", "repeat_param", 100, "loop functions"),
        Field("RecurrentParameter", "recurrent_param", 101),
    )),
)


def argument_type(spec, arg):
    """The proto type of argument ``arg`` of function ``spec``, as spelled in .proto.

    Raises:
        KeyError: the argument's kind has no proto type and ``wire.ARG_TYPES`` names none.
    """
    special = wire.ARG_TYPES.get(spec.name, {})
    if arg.name in special:
        return special[arg.name]
    try:
        return wire.KIND_TYPES[arg.kind.rstrip("?")]
    except KeyError:
        raise KeyError(f"{spec.api_name}: argument '{arg.name}' of kind {arg.kind!r} has no "
                       "proto type; add it to nnabla._spec.wire.ARG_TYPES") from None


def _parameter_message(name, typed_arguments):
    """``<name>Parameter``: a field per ``(argument, proto type)``, numbered from 1 in order."""
    return Message(f"{name}Parameter", tuple(
        Field(proto_type, arg, i + 1) for i, (arg, proto_type) in enumerate(typed_arguments)))


def function_parameters():
    """``(field name, number, message)`` per function with arguments, in nnabla's order.

    A function without a number in ``wire.FUNCTION_FIELDS`` is one nnabla's NNP format does
    not know: it gets no parameter message (the tests require a number for every spec entry
    today).
    """
    known = [s for s in SPECS.values() if s.args and s.name in wire.FUNCTION_FIELDS]
    return sorted(((f"{s.snake}_param", wire.FUNCTION_FIELDS[s.name], _parameter_message(
        s.name, [(a.name, argument_type(s, a)) for a in s.args])) for s in known),
        key=lambda entry: entry[1])


def solver_parameters():
    """``(field name, number, message)`` per solver, in nnabla's order."""
    return sorted(((field_name, number, _parameter_message(name, solver_arguments(name)))
                   for name, (field_name, number) in wire.SOLVER_FIELDS.items()),
                  key=lambda entry: entry[1])


def solver_arguments(name):
    """``(argument, proto type)`` of solver ``name``: bool defaults are bool, others float."""
    return [(arg, "bool" if isinstance(default, bool) else "float")
            for arg, default in SOLVER_SPECS[name].args]


def messages():
    """Every message of the schema in file order.

    Returns:
        list of Message: the fixed messages, ``Solver`` and ``Function`` each with its
        parameter oneof filled and followed by the parameter messages the oneof names.
    """
    generated = {"Solver": solver_parameters(), "Function": function_parameters()}
    out = []
    for message in FIXED:
        parameters = generated.get(message.name)
        if parameters is None:
            out.append(message)
            continue
        oneof = PARAMETERS._replace(fields=tuple(
            Field(m.name, field_name, number) for field_name, number, m in parameters))
        out.append(message._replace(
            fields=tuple(oneof if item is PARAMETERS else item for item in message.fields)))
        out.extend(m for _, _, m in parameters)
    return out


_FieldProto = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"double": _FieldProto.TYPE_DOUBLE, "float": _FieldProto.TYPE_FLOAT,
            "int64": _FieldProto.TYPE_INT64, "uint32": _FieldProto.TYPE_UINT32,
            "bool": _FieldProto.TYPE_BOOL, "string": _FieldProto.TYPE_STRING}


def _json_name(name):
    """protoc's JSON name: ``lr_scheduler_type`` -> ``lrSchedulerType``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _set_type(proto, type_name, scope=""):
    if type_name in _SCALARS:
        proto.type = _SCALARS[type_name]
    else:
        proto.type = _FieldProto.TYPE_MESSAGE
        proto.type_name = f"{scope}.{type_name}"


def _add_field(message_proto, field, oneof_index=None):
    """Append ``field`` to ``message_proto``; a map becomes a nested ``<Name>Entry`` type."""
    proto = message_proto.field.add(name=field.name, number=field.number,
                                    json_name=_json_name(field.name))
    type_name, repeated = field.type, False
    if type_name.startswith("repeated "):
        type_name, repeated = type_name[len("repeated "):], True
    proto.label = _FieldProto.LABEL_REPEATED if repeated else _FieldProto.LABEL_OPTIONAL
    if type_name.startswith("map<"):
        key, value = (t.strip() for t in type_name[len("map<"):-1].split(","))
        entry_name = "".join(p[:1].upper() + p[1:] for p in field.name.split("_")) + "Entry"
        entry = message_proto.nested_type.add(name=entry_name)
        entry.options.map_entry = True
        _add_field(entry, Field(key, "key", 1))
        _add_field(entry, Field(value, "value", 2))
        proto.label = _FieldProto.LABEL_REPEATED
        _set_type(proto, entry.name, scope=f".{message_proto.name}")
    else:
        _set_type(proto, type_name)
    if field.packed:
        proto.options.packed = True
    if oneof_index is not None:
        proto.oneof_index = oneof_index


def file_descriptor(schema=None):
    """The ``FileDescriptorProto`` of ``nnabla.proto`` (proto3, no package).

    Args:
        schema: list of :class:`Message`; default :func:`messages`.

    Returns:
        google.protobuf.descriptor_pb2.FileDescriptorProto: what protoc compiles the
        printed schema to.
    """
    file_proto = descriptor_pb2.FileDescriptorProto(name="nnabla.proto", syntax="proto3")
    for message in messages() if schema is None else schema:
        message_proto = file_proto.message_type.add(name=message.name)
        for item in message.fields:
            if isinstance(item, Oneof):
                message_proto.oneof_decl.add(name=item.name)
                for field in item.fields:
                    _add_field(message_proto, field, len(message_proto.oneof_decl) - 1)
            else:
                _add_field(message_proto, item)
    return file_proto
