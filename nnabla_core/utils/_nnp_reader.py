"""Reading the files of a model (``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf``, ``.h5``).

:func:`read_model` merges every protobuf part into one ``NNablaProtoBuf`` and registers the
parameters found (in a given parameter scope), as nnabla's loaders do; it returns the
solver-state members (``*.optimizer``) for the caller. Each file is parsed and checked
completely before any parameter is registered.
"""
from __future__ import annotations

import os
from collections import OrderedDict

from .. import parameter as _parameter
from . import _nnp_archive, _nnp_parameters, nnabla_pb2
from ._nnp_functions import NnpFormatError

MODEL_EXTENSIONS = (".nnp", ".nntxt", ".prototxt", ".protobuf", ".h5")


def _as_list(filenames):
    if isinstance(filenames, (list, tuple)):
        return list(filenames)
    return [filenames]


def _read_one(source, ext, proto, parameter_only):
    """``(parameter entries, solver-state members)`` of one file; merges its proto part."""
    where = _nnp_archive.describe(source)
    if ext == ".nnp":
        entries, states = [], OrderedDict()
        for name, data in _nnp_archive.read_archive(source):
            member_ext = os.path.splitext(name)[1]
            if member_ext == ".optimizer":
                states[name] = data
                continue
            if member_ext in _nnp_archive.TEXT_EXTENSIONS and parameter_only:
                part = nnabla_pb2.NNablaProtoBuf()
                _nnp_archive.merge_text(part, data, f"{where}, member {name!r}")
                entries.extend(_nnp_parameters.entries_from_proto(part, where))
                continue
            entries.extend(_nnp_parameters.read_member(name, data, proto, where) or [])
        return entries, states
    if ext not in MODEL_EXTENSIONS:
        raise ValueError(f"{where}: unsupported model file extension {ext!r}; expected one of "
                         f"{', '.join(MODEL_EXTENSIONS)}")
    target = nnabla_pb2.NNablaProtoBuf() if parameter_only else proto
    return _nnp_parameters.read_parameter_file(source, ext, target), OrderedDict()


def read_model(filenames, extension=".nntxt", scope=None, exclude_parameter=False,
               parameter_only=False):
    """Read model files into one proto and register their parameters.

    Args:
        filenames (str, file object or list of them): the files, read in order.
        extension (str): format of file objects.
        scope (OrderedDict, optional): parameter scope to register into (the current one
            when None).
        exclude_parameter (bool): read no parameter.
        parameter_only (bool): read parameters only (no networks).

    Returns:
        (NNablaProtoBuf, OrderedDict): the merged proto and the solver-state members
        (member name -> bytes).

    Raises:
        FileNotFoundError, NnpFormatError, ValueError: naming the file (and member).
    """
    proto, states, entries = nnabla_pb2.NNablaProtoBuf(), OrderedDict(), []
    for source in _as_list(filenames):
        ext = _nnp_archive.extension_of(source, extension)
        found, found_states = _read_one(source, ext, proto, parameter_only)
        entries.extend(found)
        states.update(found_states)
    if parameter_only:
        del proto.network[:]
    if not exclude_parameter:
        names = [name for name, _, _ in entries]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated and len(set(names)) != len(names):
            shapes = {}
            for name, values, _ in entries:
                if shapes.setdefault(name, values.shape) != values.shape:
                    raise NnpFormatError(f"parameter {name!r} is stored twice with different "
                                         f"shapes ({shapes[name]} and {values.shape})")
        scope = scope if scope is not None else _parameter.get_current_parameter_scope()
        with _parameter.parameter_scope("", scope):
            _parameter.register_loaded(entries, "nnabla.utils.load")
    return proto, states
