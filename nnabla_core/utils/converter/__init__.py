"""``nnabla.utils.converter``: model file conversion and the function tables it uses.

:func:`convert_files` (``nnabla_cli convert``) converts NNP to NNP (parameter format,
executor selection, ``split`` into ranges of functions), to NNB (the nnabla C runtime's
binary format, as nnabla 1.39 writes it) and between NNP and ONNX (with the ``onnx``
package: ``pip install nnabla[onnx]``). TensorFlow and TFLite formats are not provided.

The function tables are derived from our function spec (:mod:`nnabla._spec`) and the NNP
schema (:mod:`nnabla.utils.nnabla_pb2`), in the layout of nnabla's
``functions.yaml``::

    {category: {FunctionType: {"snake_name": str,
                               "inputs": {name: {"optional"/"variadic"/"parameter": True}},
                               "arguments": {name: {"type": proto type, "default": str}},
                               "outputs": {name: {...}}}}}

An argument's type is that of its field in the function's ``<Type>Parameter``
message (``"int64"``, ``"float"``, ``"bool"``, ``"string"``, ``"Shape"``,
``"repeated int64"``, ...).
"""
from __future__ import annotations

from collections import OrderedDict, namedtuple

_SupportedInfo = namedtuple("_SupportedInfo", "import_name export_name")
# What this package converts (nnabla 1.39 lists TensorFlow and TFLite formats too).
formats = _SupportedInfo(import_name=["NNP", "ONNX"], export_name=["NNP", "NNB", "ONNX"])
extensions = _SupportedInfo(import_name=[".nnp", ".onnx"],
                            export_name=[".nnp", ".nnb", ".onnx"])

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


def select_executor(nnp, name=None):
    """The executor a conversion uses: the first one."""
    return nnp.protobuf.executor[0]


def search_network(nnp, name):
    """The network called ``name`` in ``nnp.protobuf``, or None."""
    return next((n for n in nnp.protobuf.network if n.name == name), None)


def calc_shape_size(shape, batch_size):
    """The number of elements of a ``Shape`` message, ``-1`` dimensions being ``batch_size``."""
    size = 1
    for d in shape.dim:
        size *= batch_size if d < 0 else d
    return size


def convert_files(args, ifiles, output):
    """Convert model files; see :func:`nnabla.utils.converter.commands.convert_files`."""
    from .commands import convert_files as convert
    return convert(args, ifiles, output)


def nnb_template(args, ifiles, output):
    """Write the NNB settings template (YAML) of a model; see
    :func:`nnabla.utils.converter.commands.nnb_template`."""
    from .commands import nnb_template as template
    return template(args, ifiles, output)


def dump_files(args, ifiles):
    """Print the networks of model files; see :func:`nnabla.utils.converter.commands.dump_files`."""
    from .commands import dump_files as dump
    return dump(args, ifiles)


def type_to_pack_format(typestring):
    """The NNB packing code of an argument type (``'Shape'`` -> ``'iI'``)."""
    from .nnablart.nnb import type_to_pack_format as code
    return code(typestring)


def get_api_level_info():
    """The NNB API levels (function ids and argument codes) of the nnabla C runtime."""
    from .nnablart.nnb import get_api_level_info as info
    return info()
