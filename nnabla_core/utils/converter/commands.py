"""``convert_files``: the conversions of ``nnabla_cli convert`` (nnabla 1.39's entry point).

``convert_files(args, ifiles, output)`` reads ``ifiles`` in ``args.import_format`` (``NNP``,
``ONNX``) and writes ``output`` in ``args.export_format`` (``NNP``, ``NNB``, ``CSRC``: C
sources in a folder, ``ONNX``). ``args`` is the ``argparse.Namespace`` of
``nnabla_cli convert``; the attributes read (all optional, with these defaults) are
:data:`DEFAULTS`.
"""
from __future__ import annotations

import os
import types

from .. import nnabla_pb2

DEFAULTS = {
    "import_format": "NNP", "export_format": "NNP", "nnp_no_expand_network": False,
    "nnp_import_executor_index": None, "batch_size": 1, "split": None,
    "define_version": None, "config": None, "nnp_parameter_nntxt": False,
    "nnp_parameter_h5": False, "nnp_exclude_parameter": False, "nnp_version": None,
    "api": -1, "settings": None, "default_variable_type": ["FLOAT32"], "ir_version": -1,
    "outputs": None, "inputs": None, "channel_last": False, "quantization": False,
    "dataset": None, "force": False, "dump_verbose": False, "dump_functions": False,
    "dump_variables": False, "dump_limit": -1, "dump_variable_name": None,
}


def _option(args, name):
    return getattr(args, name, DEFAULTS[name])


def _import_file(args, ifiles):
    kind = _option(args, "import_format")
    if kind == "NNP":
        from .nnabla import NnpImporter
        return NnpImporter(*ifiles, expand_network=not _option(args, "nnp_no_expand_network"),
                           executor_index=_option(args, "nnp_import_executor_index")).execute()
    if kind == "ONNX":
        from .onnx import OnnxImporter
        return OnnxImporter(*ifiles).execute()
    raise ValueError(f"nnabla.utils.converter: import format {kind!r} is not supported; "
                     f"expected 'NNP' or 'ONNX'")


def _batch_size(args, nnp, kind):
    if _option(args, "batch_size") < 0:
        print(f"{kind}: Using batch size from input file.")
        print(f"{kind}: If you want to use with other size use `-b` option and provide a "
              f"positive value.")
        return nnp.protobuf.network[0].batch_size
    return _option(args, "batch_size")


def _export_from_nnp(args, nnp, output):
    kind = _option(args, "export_format")
    define_version = _option(args, "define_version") or ""
    if kind == "NNP":
        from .nnabla import NnpExporter
        parameter_type = ("included" if _option(args, "nnp_parameter_nntxt") else
                          "h5" if _option(args, "nnp_parameter_h5") else "protobuf")
        if _option(args, "nnp_exclude_parameter"):
            parameter_type = "none"
        version = _option(args, "nnp_version")
        if version is not None:
            from ._versions import for_version
            nnp = for_version(nnp, version)
        return NnpExporter(nnp, _option(args, "batch_size"), parameter_type).execute(output)
    if kind == "NNB":
        from .nnablart import NnbExporter
        batch_size = _batch_size(args, nnp, "NNB")
        version = {}
        if define_version.startswith("nnb_"):
            version["nnb_version"] = int(define_version.split("_")[1])
        return NnbExporter(nnp, batch_size, api_level=_option(args, "api"), **version).execute(
            output, None, _option(args, "settings"), _option(args, "default_variable_type"))
    if kind == "CSRC":
        from .nnablart import CsrcExporter
        return CsrcExporter(nnp, _batch_size(args, nnp, "CSRC")).execute(output)
    if kind == "ONNX":
        from .onnx import OnnxExporter
        batch_size = _batch_size(args, nnp, "ONNX")
        opset = {}
        if define_version.startswith("opset_"):
            opset["opset"] = define_version.split("_")[1]
        return OnnxExporter(nnp, batch_size, _option(args, "ir_version"), **opset).execute(
            output)
    raise ValueError(f"nnabla.utils.converter: export format {kind!r} is not supported; "
                     f"expected 'NNP', 'NNB', 'CSRC' or 'ONNX'")


def _ranges(text, count):
    """``'0-3,5-'`` -> ``[(0, 3), (5, count - 1)]`` (inclusive function positions; an empty
    start is 0, an empty end the last of the ``count`` functions), as nnabla reads ``-S``."""
    ranges = []
    for part in text.split(","):
        pieces = part.split("-")
        try:
            if len(pieces) != 2:
                raise ValueError
            start = int(pieces[0]) if pieces[0] else 0
            end = int(pieces[1]) if pieces[1] else count - 1
        except ValueError:
            raise ValueError(f"nnabla.utils.converter: --split {text!r}: range must be "
                             f'"x0-y0,x1-y1,..."') from None
        if end < start or end > count - 1:
            raise ValueError(f"nnabla.utils.converter: --split {text!r}: range must be in 0 "
                             f"to {count - 1}")
        ranges.append((start, end))
    return ranges


def shrink_nnp(nnp, start, end):
    """The ``nnp`` reduced to functions ``start``..``end`` of its only network, with the
    variables, parameters and executor entries they use."""
    proto = nnp.protobuf
    if len(proto.executor) != 1 or len(proto.network) != 1:
        raise ValueError("nnabla.utils.converter: --split needs exactly one network and one "
                         "executor in the file (choose one with --nnp-import-executor-index)")
    source = proto.network[0]
    if not 0 <= start <= end < len(source.function):
        raise ValueError(f"nnabla.utils.converter: --split range {start}-{end} is outside "
                         f"the {len(source.function)} functions of network {source.name!r}")
    shrunk = nnabla_pb2.NNablaProtoBuf()
    net = shrunk.network.add()
    net.CopyFrom(source)
    del net.function[:]
    used = {}
    for f in source.function[start:end + 1]:
        net.function.add().CopyFrom(f)
        used.update((name, None) for name in list(f.input) + list(f.output))
    del net.variable[:]
    for v in source.variable:
        if v.name in used:
            used[v.name] = v.type
            net.variable.add().CopyFrom(v)
    shrunk.parameter.extend(p for p in proto.parameter if p.variable_name in used)
    executor = shrunk.executor.add()
    executor.CopyFrom(proto.executor[0])
    for field in ("data_variable", "generator_variable", "output_variable",
                  "parameter_variable"):
        executor.ClearField(field)
    for name in source.function[start].input:
        if used[name] == "Buffer":
            executor.data_variable.add(variable_name=name)
    executor.generator_variable.extend(g for g in proto.executor[0].generator_variable
                                       if g.variable_name in used)
    for name in source.function[end].output:
        if used[name] == "Buffer":
            executor.output_variable.add(variable_name=name)
    executor.parameter_variable.extend(p for p in proto.executor[0].parameter_variable
                                       if p.variable_name in used)
    return types.SimpleNamespace(protobuf=shrunk, other_files=nnp.other_files)


def convert_files(args, ifiles, output):
    """Convert model files (nnabla's ``nnabla.utils.converter.convert_files``).

    Args:
        args (argparse.Namespace): the options of ``nnabla_cli convert`` (see
            :data:`DEFAULTS`): ``import_format``/``export_format`` (``'NNP'``, ``'NNB'``,
            ``'CSRC'``, ``'ONNX'``), ``batch_size`` (negative: the file's), ``split``
            (``'0-3,4-'``: one output per range of functions, named
            ``<output>_<start>_<end><ext>``, and a YAML summary of their inputs and outputs
            printed; needs ``nnp_import_executor_index``),
            ``nnp_import_executor_index``, ``nnp_no_expand_network``, ``nnp_parameter_h5``,
            ``nnp_parameter_nntxt``, ``nnp_exclude_parameter``, ``nnp_version``,
            ``define_version`` (``'nnb_3'``, ``'opset_13'``), ``api``, ``settings``,
            ``default_variable_type``, ``ir_version``.
        ifiles (list of str): input files.
        output (str): output file (or folder for NNP; the folder of the C sources for CSRC).

    Returns:
        bool: True when written.

    Raises:
        ValueError, NotImplementedError: for unsupported formats or options, naming them.
    """
    split = _option(args, "split")
    if split is not None and _option(args, "nnp_import_executor_index") is None:
        raise ValueError('nnabla.utils.converter: "-S" needs "-E": --split cuts the network '
                         'of one executor; choose it with --nnp-import-executor-index')
    nnp = _import_file(args, ifiles)
    if split is None:
        return _export_from_nnp(args, nnp, output)
    yaml = _require_yaml()
    network_name = nnp.protobuf.executor[0].network_name
    for network in list(nnp.protobuf.network):
        if network.name != network_name:
            nnp.protobuf.network.remove(network)
    network = next(n for n in nnp.protobuf.network if n.name == network_name)
    stem, ext = os.path.splitext(output)
    summary = {}
    for start, end in _ranges(split, len(network.function)):
        print(f"   Shrink {start} to {end}.")
        part_output = f"{stem}_{start}_{end}{ext}"
        print(f"    Output to [{part_output}]")
        part = shrink_nnp(nnp, start, end)
        summary[part_output] = _ports(part.protobuf)
        _export_from_nnp(args, part, part_output)
    print(yaml.safe_dump(summary, default_flow_style=False))
    return True


def _require_yaml():
    try:
        import yaml
    except ImportError:
        raise ImportError("nnabla.utils.converter: --split prints its summary as YAML: "
                          "install PyYAML (pip install pyyaml)") from None
    return yaml


def _ports(proto):
    """The inputs and outputs of a split part (name and shape, in network order)."""
    executor = proto.executor[0]
    inputs = {v.variable_name for v in executor.data_variable}
    outputs = {v.variable_name for v in executor.output_variable}
    ports = {"input": [], "output": []}
    for v in proto.network[0].variable:
        shape = f"({', '.join(str(d) for d in v.shape.dim)})"
        if v.name in inputs:
            ports["input"].append({"name": v.name, "shape": shape})
        if v.name in outputs:
            ports["output"].append({"name": v.name, "shape": shape})
    return ports


def nnb_template(args, ifiles, output):
    """Write the settings YAML the NNB exporter would use for ``ifiles`` to ``output``
    (each variable's type, each function's implementation), to edit and pass back with
    ``--settings``. Options: ``batch_size``, ``api``, ``default_variable_type``."""
    from .nnablart import NnbExporter

    nnp = _import_file(args, ifiles)
    batch_size = _option(args, "batch_size")
    exporter = NnbExporter(nnp, batch_size if batch_size is not None else -1,
                           api_level=_option(args, "api"))
    return exporter.execute(None, output, None, _option(args, "default_variable_type"))


def _shapes(network):
    return {v.name: list(v.shape.dim) for v in network.variable}


def _dump_ports(prefix, label, entries, shapes):
    for i, entry in enumerate(entries):
        shape = shapes.get(entry.variable_name, " - ")
        print(f"{prefix}{label} variable[{i}]: Name:{entry.variable_name:30} Shape:{shape}")


def _dump_network(args, prefix, network):
    shapes = _shapes(network)
    name = _option(args, "dump_variable_name")
    if name:
        if name in shapes:
            print(f"Variable Name: {name:20} Shape: {shapes[name]}")
        else:
            print(f"DUMP ERROR: variable {name} not found.")
        return
    if not _option(args, "dump_functions"):
        return
    for i, f in enumerate(network.function):
        head = f"{prefix}  Function[{i:^5}]: "
        print(f"{head}Type: {f.type:20} Name: {f.name}")
        if _option(args, "dump_variables"):
            for j, v in enumerate(f.input):
                print(f"{head}  Input{j}: Name: {v:20} Shape: {shapes[v]}")
            for j, v in enumerate(f.output):
                print(f"{head} Output{j}: Name: {v:20} Shape: {shapes[v]}")


def _dump_verbose(args, message, prefix):
    limit = _option(args, "dump_limit")
    for field, value in message.ListFields():
        path = ":".join(prefix)
        if field.message_type is None and not _repeated(field):
            print(f"{path}:{field.name}: {value}")
        elif _repeated(field):
            print(f"{path} has {len(value)} {field.name}(s).")
            for n, item in enumerate(value[:limit] if limit >= 0 else value):
                if field.message_type is None:
                    print(f"{path}:{field.name}[{n}]: {item}")
                else:
                    _dump_verbose(args, item, prefix + [f"{field.name}[{n}]"])
        else:
            _dump_verbose(args, value, prefix + [field.name])


def _repeated(field):
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == field.LABEL_REPEATED


def dump_files(args, ifiles):
    """Print the optimizers, monitors and executors of ``ifiles`` with their data, output
    and loss variables (``dump_functions``/``dump_variables``: also each function and its
    variables; ``dump_variable_name``: one variable's shape; ``dump_verbose``: every field),
    as ``nnabla_cli dump`` does."""
    proto = _import_file(args, ifiles).protobuf
    if _option(args, "dump_verbose"):
        _dump_verbose(args, proto, [_option(args, "import_format")])
        return True
    networks = {n.name: n for n in proto.network}
    sections = ((proto.optimizer, "  Optimizer[{}]: ", (
                    (" (In) Data     ", "data_variable"), (" (In) Generator", "generator_variable"),
                    (" (Out)Loss     ", "loss_variable"))),
                (proto.monitor, "  Monitor  [{}]: ", (
                    (" (In) Data     ", "data_variable"), (" (In) Generator", "generator_variable"),
                    (" (Out)Monitor  ", "monitor_variable"))),
                (proto.executor, "  Executor [{}]: ", (
                    (" (In) Data     ", "data_variable"), (" (In) Generator", "generator_variable"),
                    (" (Out)Loss     ", "loss_variable"), (" (Out)Output   ", "output_variable"))))
    for entries, fmt, ports in sections:
        for i, entry in enumerate(entries):
            network = networks.get(entry.network_name)
            if network is None:
                raise ValueError(f"nnabla_cli dump: {entry.name!r} uses network "
                                 f"{entry.network_name!r}, which the files do not define")
            prefix = fmt.format(i)
            print(f"{prefix}{entry.name}")
            for label, field in ports:
                _dump_ports(prefix, label, getattr(entry, field), _shapes(network))
            _dump_network(args, prefix, network)
    return True
