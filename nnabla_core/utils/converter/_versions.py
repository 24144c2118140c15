"""NNP -> NNP for an older nnabla (``nnabla_cli convert --nnp-version 1.12.0``).

The older release's function table (its ``functions.yaml``) is read from
``~/.nnabla/function_info_<version>.yaml``, downloaded from nnabla's repository when absent
(as nnabla does). A function is writable for that release if it exists there with the same
inputs and outputs and every argument it had still has a default; the network may use only
such functions. Arguments the older release does not know are then dropped from the file.
"""
from __future__ import annotations

import os
import urllib.request
from collections import OrderedDict

from ._function_table import get_function_info

# Outputs nnabla 1.39's function table lists where the spec has more (the statistics and
# indices some of these functions give on request are not in nnabla's table). Recorded by
# tools/record_converter_nnb.py (tests/data/converter/nnabla_function_outputs.json).
NNABLA_OUTPUT_COUNTS = {
    "FusedBatchNormalization": 1, "BatchNormalization": 1, "GroupNormalization": 1,
    "InstanceNormalization": 1, "LayerNormalization": 1, "SyncBatchNormalization": 1,
    "TensorNormalization": 1, "WeightStandardization": 1, "SpectralNorm": 1, "Max": 1,
    "Min": 1, "Sort": 1,
}

_URL = ("https://raw.githubusercontent.com/sony/nnabla/v{version}/build-tools/"
        "code_generator/functions.yaml")


def _yaml():
    try:
        import yaml
    except ImportError:
        raise ImportError("nnabla.utils.converter: reading nnabla's function tables needs "
                          "PyYAML; install it with: pip install 'nnabla[converter]'") from None
    return yaml


def function_table_path(version):
    return os.path.join(os.path.expanduser("~"), ".nnabla", f"function_info_{version}.yaml")


def _download(version, path):
    from .._nnp_archive import write_target

    url = _URL.format(version=version)
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            data = response.read()
    except OSError as error:
        raise ValueError(f"nnabla.utils.converter: the function table of nnabla v{version} is "
                         f"not in {path} and could not be downloaded from {url}: {error}") \
            from None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_target(path, data, binary=True)


def load_function_table(version):
    """The functions of nnabla ``version`` (type -> information), flattened."""
    path = function_table_path(version)
    if not os.path.exists(path):
        _download(version, path)
    with open(path) as stream:
        categories = _yaml().safe_load(stream) or {}
    if not isinstance(categories, dict):
        raise ValueError(f"nnabla.utils.converter: {path} is not a function table")
    return OrderedDict((name, info) for category in categories.values()
                       for name, info in (category or {}).items())


def _compatible(function, current, old):
    """Whether nnabla's older table ``old`` reads ``function`` as ``current`` describes it."""
    for name, flags in current["inputs"].items():
        if name not in old.get("inputs", {}):
            return False
        old_flags = old["inputs"][name] or {}
        if any(k in old_flags and bool(old_flags[k]) != bool(v) for k, v in flags.items()):
            return False
    for name, arg in (old.get("arguments") or {}).items():
        if name not in current.get("arguments", {}) and "default" not in (arg or {}):
            return False
    outputs = NNABLA_OUTPUT_COUNTS.get(function, len(current["outputs"]))
    return outputs == len(old.get("outputs") or {})


def supported_functions(version):
    """The function types whose files nnabla ``version`` reads as ours."""
    old, current = load_function_table(version), get_function_info()
    return {name for name, info in current.items()
            if name in old and _compatible(name, info, old[name])}


def for_version(nnp, version):
    """``nnp`` rewritten for nnabla ``version``: the first executor's network and its
    parameters only, arguments the older release does not know removed.

    Raises:
        ValueError: if the network uses a function that release cannot read (or reads with
            other arguments).
    """
    from .. import nnabla_pb2
    from .._nnp_functions import parameter_field, spec_of

    proto = nnp.protobuf
    executor = proto.executor[0]
    network = next((n for n in proto.network if n.name == executor.network_name), None)
    if network is None:
        raise ValueError(f"nnabla.utils.converter: executor network "
                         f"{executor.network_name!r} is not in the file")
    used = {f.type for n in proto.network for f in n.function}
    missing = sorted(used - supported_functions(version))
    if missing:
        raise ValueError(f"nnp file contains unsupported functions by nnabla version: "
                         f"{version}: {', '.join(missing)}")
    old, current = load_function_table(version), get_function_info()
    for f in network.function:
        arguments = current[f.type].get("arguments", {})
        if not arguments:
            continue
        field = parameter_field(spec_of(f.type))
        param = getattr(f, field)
        old_arguments = old[f.type].get("arguments") or {}
        for name, arg in arguments.items():
            if not old_arguments:
                if str(getattr(param, name)) != str(arg.get("default")):
                    raise ValueError(f"{f.name} ({f.type}): nnabla v{version} only supports "
                                     f"the default {name}={arg.get('default')}")
            elif name not in old_arguments:
                param.ClearField(name)
        if not old_arguments:
            f.ClearField(field)
    kept = nnabla_pb2.NNablaProtoBuf()
    kept.network.add().CopyFrom(network)
    kept.executor.add().CopyFrom(executor)
    kept.parameter.extend(proto.parameter)
    nnp.protobuf = kept
    return nnp
