"""Reading model files into the converter's ``nnp`` object (``protobuf``, ``other_files``).

As nnabla's converter does: every ``.nntxt``/``.prototxt`` part is merged first, then the
parameters (``.h5`` in their stored order, ``.protobuf`` merged whole); a network whose
parameters have initializers but no stored values gets generated ones; files of other
extensions are kept in ``other_files``. Archives are read with the NNP loader's checks
(no path escapes, size limits, clear errors naming the file and member).
"""
from __future__ import annotations

import os
import types

import numpy as np

from ... import _nnp_archive, _nnp_parameters, nnabla_pb2

_TEXT = (".nntxt", ".prototxt")
_PARAMS = (".protobuf", ".h5")


def _add_parameters(proto, entries):
    for name, values, need_grad in entries:
        parameter = proto.parameter.add(variable_name=name, need_grad=bool(need_grad))
        parameter.shape.dim.extend(values.shape)
        parameter.data.extend(np.asarray(values, dtype=np.float32).ravel().tolist())


def _read_parameter_part(proto, ext, data, where):
    if ext == ".h5":
        _add_parameters(proto, _nnp_parameters.entries_from_h5(data, where))
    else:
        _nnp_archive.merge_binary(proto, data, where)


class NnpImporter:
    """Reads ``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf`` and ``.h5`` files.

    Args:
        *files (str): the files, merged in order.
        expand_network (bool): expand Neural Network Console loop control (refused:
            not supported; networks without it are unchanged).
        executor_index (int, optional): keep only that executor and its network.
    """

    def __init__(self, *files, expand_network=False, executor_index=None):
        self._files = files
        self._expand_network = expand_network
        self._executor_index = executor_index

    def _read(self, proto, path, other_files):
        ext = os.path.splitext(path)[1].lower()
        where = _nnp_archive.describe(path)
        if ext == ".nnp":
            members = _nnp_archive.read_archive(path)
            for name, data in members:
                if os.path.splitext(name)[1].lower() in _TEXT:
                    _nnp_archive.merge_text(proto, data, f"{where}, member {name!r}")
            for name, data in members:
                member_ext = os.path.splitext(name)[1].lower()
                if member_ext in _PARAMS:
                    _read_parameter_part(proto, member_ext, data, f"{where}, member {name!r}")
        elif ext in _TEXT:
            _nnp_archive.merge_text(proto, _nnp_archive.read_source(path, binary=False), where)
        elif ext in _PARAMS:
            _read_parameter_part(proto, ext, _nnp_archive.read_source(path, binary=True), where)
        else:
            other_files.append(path)

    def execute(self):
        """The ``nnp`` object: ``nnp.protobuf`` (NNablaProtoBuf), ``nnp.other_files``.

        Raises:
            ValueError: for a file without an executor, or an executor naming a network
                the files do not define.
        """
        proto, other_files = nnabla_pb2.NNablaProtoBuf(), []
        for path in self._files:
            print(f"Importing {path}")
            self._read(proto, path, other_files)
        if not proto.executor:
            raise ValueError(f"nnabla.utils.converter: {list(self._files)} define no executor; "
                             f"the converter converts the network of the first executor")
        network = _find_network(proto, proto.executor[0].network_name)
        with_init = [v for v in network.variable
                     if v.type == "Parameter" and v.HasField("initializer")]
        if with_init and not proto.parameter:
            _generate_parameters(proto, with_init, network.batch_size)
        if self._executor_index is not None and self._executor_index < len(proto.executor):
            print(f" Try to leave only executor[{proto.executor[self._executor_index].name}].")
            proto = _only_executor(proto, proto.executor[self._executor_index])
        if self._expand_network:
            expand(proto)
        return types.SimpleNamespace(protobuf=proto, other_files=other_files)


def _find_network(proto, name):
    for network in proto.network:
        if network.name == name:
            return network
    raise ValueError(f"nnabla.utils.converter: executor network {name!r} is not defined "
                     f"(networks: {[n.name for n in proto.network]})")


def _generate_parameters(proto, variables, batch_size):
    from ....core.graph_def import _create_initializer

    rng = np.random.RandomState(0)
    for var in variables:
        shape = tuple(d if d >= 1 else batch_size for d in var.shape.dim)
        values = _create_initializer(var, rng)(shape)
        parameter = proto.parameter.add(variable_name=var.name)
        parameter.shape.dim.extend(shape)
        parameter.data.extend(np.asarray(values, dtype=np.float32).ravel().tolist())


def _only_executor(proto, executor):
    network = _find_network(proto, executor.network_name)
    kept = nnabla_pb2.NNablaProtoBuf()
    kept.CopyFrom(proto)
    for field in ("optimizer", "monitor", "network", "executor"):
        kept.ClearField(field)
    kept.network.add().CopyFrom(network)
    kept.executor.add().CopyFrom(executor)
    return kept


def _consumer_first_order(functions):
    """Functions ordered as nnabla's expander orders them: a depth-first walk from each
    function in file order through the readers of its outputs (in file order), each
    function placed in front of everything finished before it."""
    readers = {}
    for f in functions:
        for name in f.input:
            readers.setdefault(name, []).append(f)
    state, order = {}, []
    for root in functions:
        if root.name in state:
            continue
        state[root.name] = "open"
        stack = [(root, iter([r for o in root.output for r in readers.get(o, [])]))]
        while stack:
            function, pending = stack[-1]
            for reader in pending:
                if state.get(reader.name) == "open":
                    raise ValueError(f"nnabla.utils.converter: the functions form a cycle "
                                     f"through {reader.name!r}")
                if reader.name not in state:
                    state[reader.name] = "open"
                    stack.append((reader, iter([r for o in reader.output
                                                for r in readers.get(o, [])])))
                    break
            else:
                stack.pop()
                state[function.name] = "done"
                order.append(function)
    return order[::-1]


class NnpExpander:
    """nnabla's ``NnpExpander``: ``NnpExpander(proto).execute()`` returns an expanded copy
    of an ``NNablaProtoBuf`` (see :func:`expand`)."""

    def __init__(self, nnp):
        self._nnp = nnp

    def execute(self):
        proto = nnabla_pb2.NNablaProtoBuf()
        proto.CopyFrom(self._nnp)
        expand(proto)
        return proto


def expand(proto):
    """nnabla's network expansion for networks without loop control: functions in the
    expander's order, parameter variables of optimizers and executors sorted by name.

    Raises:
        NotImplementedError: for loop control (repeat_info) written by Neural Network
            Console.
    """
    for network in proto.network:
        print(f" Expanding {network.name}.")
        if len(network.repeat_info):
            raise NotImplementedError(
                f"nnabla.utils.converter: network {network.name!r} uses loop control "
                f"(repeat_info) written by Neural Network Console; expanding it is not "
                f"supported (--nnp-no-expand-network keeps the network as it is)")
        ordered = [type(f)() for f in network.function]
        for copy, f in zip(ordered, _consumer_first_order(list(network.function))):
            copy.CopyFrom(f)
        del network.function[:]
        network.function.extend(ordered)
    for section in list(proto.optimizer) + list(proto.executor):
        names = sorted(p.variable_name for p in section.parameter_variable)
        section.ClearField("parameter_variable")
        for name in names:
            section.parameter_variable.add(variable_name=name)
