"""nnabla's function table (``functions.yaml`` layout) derived from the function spec and the
NNP schema; see :mod:`nnabla.utils.converter`."""
from __future__ import annotations

from collections import OrderedDict

_SCALAR_TYPES = {1: "double", 2: "float", 3: "int64", 5: "int32", 8: "bool", 9: "string",
                 13: "uint32"}
# Fallback for arguments without a schema field (functions nnabla's NNP does not know).
_KIND_TYPES = {"int": "int64", "float": "float", "bool": "bool", "str": "string",
               "ints": "repeated int64", "floats": "repeated float"}


def _field_type(field):
    if field.message_type is not None:
        name = field.message_type.name
    else:
        name = _SCALAR_TYPES.get(field.type, str(field.type))
    return f"repeated {name}" if _is_repeated(field) else name


def _is_repeated(field):
    # protobuf 7 dropped FieldDescriptor.label for is_repeated; older ones lack the latter.
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def _arguments(spec, pb2):
    message = getattr(pb2, f"{spec.name}Parameter", None)
    fields = message.DESCRIPTOR.fields_by_name if message is not None else {}
    arguments = OrderedDict()
    for arg in spec.args:
        if arg.name in fields:
            kind = _field_type(fields[arg.name])
        else:
            kind = _KIND_TYPES.get(arg.kind.rstrip("?"), arg.kind)
        info = {"type": kind}
        if not _is_required(arg):
            info["default"] = str(arg.default)
        arguments[arg.name] = info
    return arguments


def _is_required(arg):
    from nnabla._spec import REQUIRED
    return arg.default is REQUIRED


def _flags(item, names):
    return {n: True for n in names if getattr(item, n, False)}


def _function_info(spec, pb2):
    info = OrderedDict(snake_name=spec.snake)
    info["inputs"] = OrderedDict(
        (i.name, _flags(i, ("optional", "variadic", "parameter"))) for i in spec.inputs)
    if spec.args:
        info["arguments"] = _arguments(spec, pb2)
    info["outputs"] = OrderedDict((o.name, _flags(o, ("variadic",))) for o in spec.outputs)
    return info


def get_category_info():
    """Every function by category, in the layout of nnabla's ``functions.yaml``.

    Returns:
        OrderedDict: category name -> function type name -> function information.

    Example:
        >>> from nnabla.utils.converter import get_category_info
        >>> info = get_category_info()["Neural Network Layer"]["Affine"]
        >>> info["snake_name"], info["arguments"]["base_axis"]["type"]
        ('affine', 'int64')
    """
    from nnabla._spec import SPECS
    from nnabla.utils import nnabla_pb2

    categories = OrderedDict()
    for spec in SPECS.values():
        categories.setdefault(spec.category, OrderedDict())[spec.name] = \
            _function_info(spec, nnabla_pb2)
    return categories


def get_function_info():
    """Every function's information (see :func:`get_category_info`), keyed by type name."""
    return OrderedDict((name, info) for category in get_category_info().values()
                       for name, info in category.items())
