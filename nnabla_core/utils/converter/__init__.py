"""``nnabla.utils.converter``: model file conversion and the function tables it uses.

:func:`convert_files` (``nnabla_cli convert``) converts NNP to NNP (parameter format,
executor selection, ``split`` into ranges of functions), to NNB (the nnabla C runtime's
binary format, as nnabla 1.39 writes it), to C sources for that runtime (CSRC: a folder, as
nnabla 1.39 writes it) and between NNP and ONNX (with the ``onnx`` package:
``pip install nnabla[onnx]``). TensorFlow and TFLite formats are not provided.

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

from collections import namedtuple

from ._function_table import get_category_info, get_function_info  # noqa: F401

_SupportedInfo = namedtuple("_SupportedInfo", "import_name export_name")
# What this package converts (nnabla 1.39 lists TensorFlow and TFLite formats too).
formats = _SupportedInfo(import_name=["NNP", "ONNX"],
                         export_name=["NNP", "NNB", "CSRC", "ONNX"])
extensions = _SupportedInfo(import_name=[".nnp", ".onnx"],
                            export_name=[".nnp", ".nnb", ".onnx"])

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
