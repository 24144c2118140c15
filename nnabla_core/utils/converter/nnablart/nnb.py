"""NNP -> NNB: the binary network format of the nnabla C runtime (nnabla 1.39's layout).

An NNB file is a header (``IIiIiIiIiIiIII``: version, API level, then (count, list index)
of buffers, variables, functions, inputs, outputs, then the number of memory blocks and the
size of the memory) followed by the memory-block offsets and the blocks, each padded to 4
bytes. Lists are blocks of ``I``; a variable is ``IiIBi`` (id, shape list, type and
fixed-point position, data block or ``-(actual buffer + 1)``); a function is its id and
implementation (``HH``), its input and output lists (``iI`` each) and its arguments packed
by the argument codes of its API level. Blocks are allocated in nnabla's order, so the
bytes equal nnabla's for the same network.
"""
from __future__ import annotations

import collections
import math
import struct
import types

import numpy as np

from .._function_table import get_function_info
from . import _nnb_tables
from ._buffers import plan_buffers

NN_BINARY_FORMAT_VERSION = 2
TYPES = {"FLOAT32": 0, "FIXED16": 1, "FIXED8": 2, "SIGN": 3}
_FP_POS_MAX = {1: 15, 2: 7}
_PACK = {"bool": "B", "double": "f", "float": "f", "int64": "i", "repeated int64": "iI",
         "Shape": "iI", "string": "i", "Communicator": "C"}


def type_to_pack_format(typestring):
    """The NNB argument code of an argument type (``'Shape'`` -> ``'iI'``), or None."""
    return _PACK.get(typestring)


class ApiLevelInfo:
    """The functions (id, argument code) the C runtime knows at an API level."""

    def __init__(self, level=-1):
        newest = max(_nnb_tables.API_LEVELS)
        self.api_level = level if level != -1 and level <= newest else newest
        self.functions = {}
        for lv in range(1, self.api_level + 1):
            for unique, func_id in _nnb_tables.API_LEVELS[lv].items():
                name, code = unique.split("_", 1)
                self.functions[name] = (code, func_id)

    def get_current_level(self):
        return self.api_level

    def get_function_list(self):
        return self.functions.keys()

    def get_func_id(self, name):
        return self.functions[name][1]

    def get_argument_code(self, name):
        code = self.functions[name][0]
        return "" if code == "Empty" else code

    def get_func_uniq_name(self, name):
        return f"{name}_{self.functions[name][0]}"


def get_api_level_info():
    """nnabla's ``get_api_level_info()``: an :class:`ApiLevelInfo` at the newest level."""
    return ApiLevelInfo()


def _generated(kind, shape, multiplier):
    if kind == "Normal":
        values = np.random.randn(*shape) * multiplier
    elif kind == "Uniform":
        values = np.random.uniform(-multiplier, multiplier, size=shape)
    elif kind == "Constant":
        values = np.ones(shape) * multiplier
    else:
        raise ValueError(f'Generator type "{kind}" is not supported.')
    return values.astype(np.float32)


def _size(shape, batch_size):
    return math.prod(d if d >= 0 else batch_size for d in shape.dim)


def resolve(proto):
    """Keep the parameters the networks use; list them in the first executor (nnabla's
    NNB resolver, for networks without GRU)."""
    referred = set()
    for network in proto.network:
        if any(f.type == "GRU" for f in network.function):
            raise NotImplementedError(
                f"NNB export: network {network.name!r} has a GRU; decomposing it into "
                f"affine functions for the C runtime is not supported")
        kinds = {v.name: v.type for v in network.variable}
        referred.update(i for f in network.function for i in f.input
                        if kinds.get(i) == "Parameter")
    kept = [p for p in proto.parameter if p.variable_name in referred]
    del proto.parameter[:]
    proto.parameter.extend(kept)
    executor = proto.executor[0]
    executor.ClearField("parameter_variable")
    for p in kept:
        executor.parameter_variable.add(variable_name=p.variable_name)


def network_info(proto, batch_size):
    """What the exporter needs of the first executor's network."""
    executor = proto.executor[0]
    network = next((n for n in proto.network if n.name == executor.network_name), None)
    if network is None:
        raise ValueError(f"NNB export: network {executor.network_name!r} of executor "
                         f"{executor.name!r} is not in the file")
    info = types.SimpleNamespace(network=network, executor=executor)
    info.batch_size = batch_size if batch_size >= 0 else network.batch_size
    info.parameters = collections.OrderedDict((p.variable_name, p) for p in proto.parameter)
    variables = {v.name: v for v in network.variable}
    info.generators = {}
    for g in executor.generator_variable:
        shape = [d if d > 0 else info.batch_size for d in variables[g.variable_name].shape.dim]
        info.generators[g.variable_name] = _generated(g.type, shape, g.multiplier)
    info.input_variables = [d.variable_name for d in executor.data_variable]
    info.output_variables = [o.variable_name for o in executor.output_variable]
    info.buffer_index, info.buffer_ids, info.buffer_sizes = {}, {}, {}
    for n, v in enumerate(network.variable):
        if v.type == "Buffer":
            b = len(info.buffer_index)
            info.buffer_index[b] = [n]
            info.buffer_ids[n] = b
            info.buffer_sizes[b] = _size(v.shape, info.batch_size)
    info.variables = variables
    return info


def _bytes_buffer_sizes(info, settings):
    """Buffer sizes in bytes of each variable's type (NNB versions above 2)."""
    width = {"FLOAT32": 4, "FIXED16": 2, "FIXED8": 1}
    for b, (n,) in info.buffer_index.items():
        v = info.network.variable[n]
        kind = settings["variables"].get(v.name, "FLOAT32").split("_")[0]
        info.buffer_sizes[b] = _size(v.shape, info.batch_size) * width.get(kind, 4)


def _transpose_affine_weights(info, indexes, f, done):
    for i in indexes:
        name = f.input[i]
        if name in done:
            return
        if name not in info.parameters:
            raise ValueError(f"NNB export: the weight {name!r} of {f.type} {f.name!r} is not "
                             f"in the file's parameters")
        done.add(name)
        rows = info.variables[name].shape.dim[0]
        param = info.parameters[name]
        data = np.array(param.data[:]).reshape(int(rows), -1).T
        del param.data[:]
        param.data.extend(data.flatten())


def _truncate_binary_weight(info, f):
    param = info.parameters[f.input[1]]
    kept = param.data[0:1]
    del param.data[:]
    param.data.extend(kept)


def preprocess(info):
    """The C runtime's layouts: affine weights transposed, unused binary weights cut."""
    done = set()
    for f in info.network.function:
        if f.type == "Affine":
            _transpose_affine_weights(info, [1], f, done)
        elif f.type in ("BinaryConnectAffine", "BinaryWeightAffine"):
            _transpose_affine_weights(info, [1, 2], f, done)
        elif f.type in ("BinaryWeightConvolution", "BinaryConnectConvolution"):
            _truncate_binary_weight(info, f)


def _int_bits(values):
    magnitude = np.abs(values)
    top = magnitude.max()
    if top < 1:
        return 1
    log2 = np.log2(top)
    if log2.is_integer() and values[magnitude.argmax()] > 0:
        return int(log2) + 2
    return int(np.ceil(log2)) + 1


class _Memory:
    """The NNB memory: blocks, each padded to 4 bytes, and their offsets."""

    def __init__(self):
        self.offsets, self.data = [], b""

    def alloc(self, data):
        index = len(self.offsets)
        self.offsets.append(len(self.data))
        self.data += data + b"\0" * ((-len(data)) % 4)
        return index

    def alloc_list(self, values, code="I"):
        return len(values), self.alloc(struct.pack(f"{len(values)}{code}", *values))


def _parameter_bytes(param, type_name, fp_pos, var_type):
    """A parameter's values in the variable's NNB type, and the fixed-point position."""
    array = np.array(param.data)
    if type_name == "FLOAT32":
        return struct.pack(f"{len(array)}f", *array), fp_pos
    if type_name == "SIGN":
        bits = array.astype(np.uint8)
        bits[bits == 255] = 0
        bits = bits.reshape(-1, 8)[:, ::-1].flatten()
        packed = np.packbits(bits)
        return struct.pack(f"{len(packed)}B", *packed), fp_pos
    if fp_pos is None:
        fp_pos = _FP_POS_MAX[var_type] + 1 - _int_bits(array)
    fixed = np.round(array * (1 << fp_pos)).astype(int)
    if type_name == "FIXED16":
        return struct.pack(f"{len(fixed)}h", *np.clip(fixed, -0x8000, 0x7fff)), fp_pos
    return struct.pack(f"{len(fixed)}b", *np.clip(fixed, -128, 127)), fp_pos


class NnbExporter:
    """Writes the first executor's network of an ``nnp`` object as NNB.

    Args:
        nnp: from :class:`~nnabla.utils.converter.nnabla.NnpImporter` (changed in place:
            unused parameters dropped, affine weights transposed).
        batch_size (int): replaces ``-1`` dimensions (negative: the network's batch size).
        nnb_version (int): the NNB format version (above 2: buffer sizes in bytes).
        api_level (int): the C runtime API level (-1: the newest).
    """

    def __init__(self, nnp, batch_size, nnb_version=NN_BINARY_FORMAT_VERSION, api_level=-1):
        resolve(nnp.protobuf)
        self._info = network_info(nnp.protobuf, batch_size)
        print(f"Using network [{self._info.executor.network_name}].")
        preprocess(self._info)
        self._api = ApiLevelInfo(api_level)
        self._nnb_version = nnb_version
        self._functions = get_function_info()

    def _variable(self, memory, n, v, settings, default_type, buffers_of):
        info = self._info
        shape = [d if d >= 0 else info.batch_size for d in v.shape.dim]
        shape_list = memory.alloc_list(shape)
        option = settings["variables"].setdefault(v.name, default_type[0]).split("_")
        type_name = option[0]
        if type_name not in TYPES:
            raise ValueError(f"NNB export: variable {v.name!r} has type {type_name!r}; "
                             f"expected one of {list(TYPES)}")
        var_type, fp_pos = TYPES[type_name], int(option[1]) if len(option) == 2 else None
        if v.name in info.generators:
            values = info.generators[v.name].flatten().tolist()
            data_index = memory.alloc(struct.pack(f"{len(values)}f", *values))
        elif v.type == "Parameter":
            if v.name not in info.parameters:
                raise ValueError(f"NNB export: parameter {v.name!r} has no values in the file")
            data, fp_pos = _parameter_bytes(info.parameters[v.name], type_name, fp_pos,
                                            var_type)
            data_index = memory.alloc(data)
        else:
            if var_type == TYPES["SIGN"]:
                raise ValueError("Unsupport SIGN type for Buffer Variable.")
            if var_type != TYPES["FLOAT32"] and fp_pos is None:
                raise ValueError("fp_pos must be specified for Buffer Variable")
            data_index = -(buffers_of[n] + 1) if n in buffers_of else -1
        fp = fp_pos if var_type in _FP_POS_MAX else 0
        record = struct.pack("IiIBi", n, shape_list[0], shape_list[1],
                             (fp & 0xF) << 4 | (var_type & 0xF), data_index)
        return memory.alloc(record)

    def _argument_values(self, memory, f, spec_info):
        code = self._api.get_argument_code(f.type)
        arguments = spec_info.get("arguments", {})
        if not arguments:
            if code:
                raise ValueError(f"{self._api.get_func_uniq_name(f.type)} is not supported by "
                                 f"API Level:{self._api.get_current_level()}.")
            return b""
        fmt, values, position = "", [], 0
        param = getattr(f, f"{spec_info['snake_name']}_param")
        for name, arg in arguments.items():
            value, arg_code = getattr(param, name), type_to_pack_format(arg["type"])
            if position >= len(code):
                continue        # a newer trailing argument the API level does not have
            if code[position:position + len(arg_code)] != arg_code:
                raise ValueError(f"{self._api.get_func_uniq_name(f.type)} is not supported "
                                 f"by API Level:{self._api.get_current_level()}.")
            position += len(arg_code)
            fmt += arg_code
            if arg["type"] == "repeated int64":
                values.extend(memory.alloc_list(list(value), "i"))
            elif arg["type"] == "Shape":
                values.extend(memory.alloc_list(list(value.dim), "i"))
            elif arg["type"] == "string":
                values.append(_nnb_tables.STRING_VALUES[f"{f.type}.{name}"].index(value))
            else:
                values.append(value)
        return struct.pack(fmt, *values)

    def _function(self, memory, f, settings, index_of):
        if f.type not in self._api.get_function_list():
            raise ValueError(f"{f.type}() is not supported in current API Level"
                             f"(={self._api.get_current_level()}).")
        implement = settings["functions"].setdefault(f.name, {"implement": 0})["implement"]
        data = struct.pack("H", self._api.get_func_id(f.type)) + struct.pack("H", implement)
        data += struct.pack("iI", *memory.alloc_list([index_of[i] for i in f.input]))
        data += struct.pack("iI", *memory.alloc_list([index_of[o] for o in f.output]))
        data += self._argument_values(memory, f, self._functions[f.type])
        return memory.alloc(data)

    def build(self, settings=None, default_type=("FLOAT32",)):
        """The NNB bytes (``settings``: ``{'variables': {name: 'FIXED16_12'},
        'functions': {name: {'implement': n}}}``, filled with the defaults used)."""
        info, memory = self._info, _Memory()
        settings = settings if settings is not None else {}
        settings.setdefault("functions", collections.OrderedDict())
        settings.setdefault("variables", collections.OrderedDict())
        index_of = {v.name: n for n, v in enumerate(info.network.variable)}
        inputs = memory.alloc_list([index_of[i] for i in info.input_variables])
        outputs = memory.alloc_list([index_of[o] for o in info.output_variables])
        if self._nnb_version > NN_BINARY_FORMAT_VERSION:
            _bytes_buffer_sizes(info, settings)
        sizes, buffers_of = plan_buffers(info)
        buffers = memory.alloc_list([int(s) for s in sizes])
        variables = memory.alloc_list([
            self._variable(memory, n, v, settings, default_type, buffers_of)
            for n, v in enumerate(info.network.variable)])
        functions = memory.alloc_list([self._function(memory, f, settings, index_of)
                                       for f in info.network.function])
        header = struct.pack("IIiIiIiIiIiIII", self._nnb_version,
                             self._api.get_current_level(), *buffers, *variables, *functions,
                             *inputs, *outputs, len(memory.offsets), len(memory.data))
        offsets = struct.pack(f"{len(memory.offsets)}I", *memory.offsets)
        return header + offsets + memory.data

    def execute(self, nnb_output_filename, settings_template_filename=None,
                settings_filename=None, default_type=("FLOAT32",)):
        """Write the NNB file (atomically) and, if asked, the settings used as YAML.

        Args:
            nnb_output_filename (str or None): the ``.nnb`` path.
            settings_template_filename (str or None): where to write the settings YAML.
            settings_filename (list of one str, or None): a settings YAML to apply.
            default_type (list of str): type of variables the settings do not name.
        """
        from ... import _nnp_archive

        settings = collections.OrderedDict()
        if settings_filename is not None and len(settings_filename) == 1:
            settings = _load_yaml(settings_filename[0])
        data = self.build(settings, default_type)
        if settings_template_filename is not None:
            _nnp_archive.write_target(settings_template_filename, _dump_yaml(settings),
                                      binary=False)
        if nnb_output_filename is not None:
            _nnp_archive.write_target(nnb_output_filename, data, binary=True)
        return True


def _load_yaml(path):
    try:
        import yaml
    except ImportError:
        raise ImportError("NNB export settings are YAML: install PyYAML "
                          "(pip install pyyaml)") from None
    with open(path) as stream:
        loaded = yaml.safe_load(stream) or {}
    return collections.OrderedDict(loaded)


def _dump_yaml(settings):
    import json

    try:
        import yaml
    except ImportError:
        raise ImportError("NNB settings templates are YAML: install PyYAML "
                          "(pip install pyyaml)") from None
    return yaml.safe_dump(json.loads(json.dumps(settings)), default_flow_style=False,
                          sort_keys=False)
