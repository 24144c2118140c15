"""Parameters in the NNP family of files: .h5, .protobuf, .nntxt/.prototxt and .nnp.

A parameter is ``(name, values, need_grad)``. In protobuf form it is a ``Parameter``
message (``variable_name``, ``shape.dim``, ``data`` as float32 values, ``need_grad``) of an
``NNablaProtoBuf``; in ``.h5`` form a dataset (see :mod:`nnabla._parametric.h5_parameters`);
an ``.nnp`` archive holds one of those as a member. ``nn.save_parameters`` /
``nn.load_parameters`` and :mod:`nnabla.utils.load` read and write through this module.

Example:
    >>> import io, numpy as np, nnabla as nn
    >>> from nnabla.utils import _nnp_parameters as P
    >>> params = {"w": nn.Variable.from_numpy_array(np.arange(3.0), need_grad=True)}
    >>> proto = P.proto_with_parameters(params)
    >>> [(n, v.tolist(), g) for n, v, g in P.entries_from_proto(proto, "<doc>")]
    [('w', [0.0, 1.0, 2.0], True)]
"""
from __future__ import annotations

import io
import math

import numpy as np

from .._parametric import h5_parameters
from . import _nnp_archive, nnabla_pb2
from ._nnp_functions import NnpFormatError

PARAMETER_EXTENSIONS = (".h5", ".protobuf", ".nntxt", ".prototxt", ".nnp")


def _values(variable):
    return np.asarray(variable.d)


def proto_with_parameters(params, proto=None):
    """``proto`` (a new ``NNablaProtoBuf`` if None) with one ``Parameter`` per entry of
    ``params`` (name -> Variable), in order."""
    proto = nnabla_pb2.NNablaProtoBuf() if proto is None else proto
    for name, variable in params.items():
        parameter = proto.parameter.add()
        parameter.variable_name = name
        values = _values(variable)
        parameter.shape.dim.extend(values.shape)
        parameter.data.extend(values.astype(np.float32).ravel().tolist())
        parameter.need_grad = bool(variable.need_grad)
    return proto


def entries_from_proto(proto, where):
    """The ``Parameter`` messages of ``proto`` as ``(name, float32 array, need_grad)``.

    Raises:
        NnpFormatError: for an empty name, a negative dimension or a data length that
            differs from the shape's size.
    """
    entries = []
    for parameter in proto.parameter:
        name = parameter.variable_name
        shape = tuple(int(d) for d in parameter.shape.dim)
        if not name.strip("/"):
            raise NnpFormatError(f"{where}: a parameter has an empty name")
        if any(d < 0 for d in shape):
            raise NnpFormatError(f"{where}: parameter {name!r} has shape {shape}; dimensions "
                                 f"must be >= 0")
        if len(parameter.data) != math.prod(shape):
            raise NnpFormatError(f"{where}: parameter {name!r} has shape {shape} "
                                 f"({math.prod(shape)} values) but holds "
                                 f"{len(parameter.data)} values")
        values = np.array(parameter.data, dtype=np.float32).reshape(shape)
        entries.append((name, values, bool(parameter.need_grad)))
    return entries


def h5_bytes(params):
    """``params`` as the bytes of an nnabla ``.h5`` parameter file."""
    buffer = io.BytesIO()
    h5_parameters.write_parameter_file(buffer, params)
    return buffer.getvalue()


def entries_from_h5(data, where):
    """The parameters of ``.h5`` bytes; errors name ``where``."""
    try:
        return h5_parameters.read_parameter_file(io.BytesIO(data))
    except ValueError as error:
        raise NnpFormatError(f"{where}: {error}") from None


def read_member(name, data, proto, where):
    """Parameters of one file or archive member (chosen by its extension).

    A text or binary protobuf member is merged into ``proto`` (as nnabla does), so its
    other content (networks, executors) is kept too.

    Returns:
        list of (name, values, need_grad), or None for a member that holds no parameters
        by its extension (``nnp_version.txt``, solver states).
    """
    ext = _nnp_archive.extension_of(name, "")
    label = f"{where}, member {name!r}" if name is not None else where
    if ext == ".h5":
        return entries_from_h5(data, label)
    if ext == ".protobuf":
        part = nnabla_pb2.NNablaProtoBuf()
        _nnp_archive.merge_binary(part, data, label)
        proto.MergeFrom(part)
        return entries_from_proto(part, label)
    if ext in _nnp_archive.TEXT_EXTENSIONS:
        part = nnabla_pb2.NNablaProtoBuf()
        _nnp_archive.merge_text(part, data, label)
        proto.MergeFrom(part)
        return entries_from_proto(part, label)
    return None


def read_parameter_file(source, ext, proto):
    """Every parameter of a ``.h5``/``.protobuf``/``.nntxt``/``.nnp`` file, in file order.

    Args:
        source: path or file object.
        ext (str): its format.
        proto (NNablaProtoBuf): protobuf content of the file is merged into it.

    Returns:
        list of (name, values, need_grad).
    """
    where = _nnp_archive.describe(source)
    if ext == ".nnp":
        entries = []
        for name, data in _nnp_archive.read_archive(source):
            found = read_member(name, data, proto, where)
            entries.extend(found or [])
        return entries
    if ext == ".h5":
        return entries_from_h5(_nnp_archive.read_source(source, binary=True), where)
    binary = ext == ".protobuf"
    data = _nnp_archive.read_source(source, binary=binary)
    return read_member(f"file{ext}", data, proto, where) if ext in PARAMETER_EXTENSIONS else []


def write_parameter_file(target, params, ext):
    """Write ``params`` (name -> Variable) in format ``ext``; a path is written atomically.

    ``.nnp`` gives an archive with ``nnp_version.txt`` and ``parameter.h5``.
    """
    from .nnp_format import nnp_version

    if ext == ".h5":
        h5_parameters.write_parameter_file(target, params)
    elif ext == ".protobuf":
        _nnp_archive.write_target(target, proto_with_parameters(params).SerializeToString(),
                                  binary=True)
    elif ext in _nnp_archive.TEXT_EXTENSIONS:
        text = _nnp_archive.to_text(proto_with_parameters(params))
        _nnp_archive.write_target(target, text, binary=False)
    elif ext == ".nnp":
        _nnp_archive.write_archive(target, [("nnp_version.txt", f"{nnp_version()}\n"),
                                            ("parameter.h5", h5_bytes(params))])
    else:
        raise ValueError(f"unsupported parameter file extension {ext!r}; expected one of "
                         f"{', '.join(PARAMETER_EXTENSIONS)}")
