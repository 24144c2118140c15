"""``nnabla_cli function_info``: the functions nnabla (or a converter target) supports.

Without options it prints every function type, one per line (nnabla prints a set, so its
order varies; ours is sorted). With ``.nnp`` files, only the functions their first
executor's network uses; ``-x`` excludes functions, ``-c FILE`` keeps those listed in a
config file (``Name[, FLOAT32|FIXED16|FIXED8|ALL ...]`` per line, ``;`` comments), ``-o`` writes
the list (or, for ``.yaml``, the function table with each function's ``func_type``).
``-f NNB``/``-f ONNX`` and ``--api`` list what the converters support (from
``nnabla.utils.converter``).
"""
from __future__ import annotations

import os
import sys
from collections import OrderedDict

from ._converter import converter_function


def nnabla_functions():
    """Every function type this nnabla implements."""
    from ..._spec import SPECS

    return {spec.name for spec in SPECS.values()}


def nnp_functions(path):
    """Function types of the network of the first executor of an NNP file (all networks'
    functions when it has no executor)."""
    from .._nnp_reader import read_model

    proto, _ = read_model(path, exclude_parameter=True)
    if proto.executor:
        wanted = proto.executor[0].network_name
        return {f.type for n in proto.network if n.name == wanted for f in n.function}
    return {f.type for n in proto.network for f in n.function}


def read_config(path):
    """``{function: [types]}`` of a target config file."""
    functions = OrderedDict()
    legal = ("FLOAT32", "FIXED16", "FIXED8", "ALL")
    with open(path) as stream:
        for line in stream:
            line = line.strip()
            if not line or line.startswith(";"):
                continue
            parts = [p.strip() for p in line.split(",")]
            types = [t.upper() for t in parts[1:]]
            functions[parts[0]] = ["ALL"] if not types or "ALL" in types else \
                [t for t in types if t in legal]
    return functions


def _write_yaml(functions, path):
    try:
        import yaml
    except ImportError:
        raise ImportError("nnabla_cli function_info -o *.yaml needs PyYAML: pip install pyyaml") \
            from None
    from ..converter import get_category_info

    table = get_category_info()
    for category in table.values():
        for name, info in category.items():
            info["func_type"] = functions.get(name, ["None"])
    plain = {c: {n: dict(i) for n, i in fs.items()} for c, fs in table.items()}
    with open(path, "w") as stream:
        yaml.safe_dump(_plain(plain), stream, default_flow_style=False)


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _nnabla_handler(args):
    functions = nnabla_functions()
    if args.files:
        functions &= set().union(*(nnp_functions(f) for f in args.files))
    functions -= set(args.exclude)
    table = {f: ["ALL"] for f in functions}
    if args.config:
        config = read_config(args.config)
        functions &= set(config)
        table = {k: v for k, v in config.items() if k in functions}
    names = sorted(functions)
    if not args.output:
        sys.stdout.write("\n".join(names) + "\n")
    elif os.path.splitext(args.output)[1].lower() == ".yaml":
        _write_yaml(table, args.output)
    else:
        with open(args.output, "w") as stream:
            stream.write("\n".join(names))


def function_info_command(args):
    """Print or write the function list (see the module docstring)."""
    if args.api != 0:
        info = converter_function("get_api_level_info", "function_info --api")()
        info.set_api_level(args.api)
        print(f"API_LEVEL: {info.get_current_level()}")
        if args.api != -1:
            for func in info.get_function_list():
                print(info.get_func_uniq_name(func))
        return True
    if args.all_support:
        target = args.all_support.upper()
        if target not in ("NNB", "ONNX"):
            print(f"Unsupport args: {args.all_support}")
            return False
        name = "func_set_nncr_support" if target == "NNB" else "func_set_onnx_support"
        supported = converter_function(name, f"function_info -f {target}")()
        if args.files:
            used = set().union(*(nnp_functions(f) for f in args.files))
            unsupported, supported = used - supported, supported & used
        else:
            unsupported = set()
        banner = "nnabla-c-runtime currently support the following functions in model:" \
            if target == "NNB" else "nnabla support the following onnx functions in model:"
        sys.stdout.write(banner + "\n" + "\n".join(sorted(supported)) + "\n")
        if unsupported:
            sys.stderr.write(("nnabla-c-runtime currently does not support the following "
                              "functions in model:\n" if target == "NNB" else
                              "nnabla does not support the following onnx functions in "
                              "model:\n") + "\n".join(sorted(unsupported)) + "\n")
        return True
    _nnabla_handler(args)
    return True


def add_function_info_command(subparsers):
    """Register ``function_info``."""
    p = subparsers.add_parser("function_info", help="Output function info.")
    p.add_argument("-o", "--output", default=None, help="output filename")
    p.add_argument("-f", "--all_support", default=None, help="select function set: NNB, ONNX")
    p.add_argument("files", metavar="FILE", type=str, nargs="*",
                   help="*.nnp files that the function sets want to be shown")
    p.add_argument("-c", "--config", default=None,
                   help="user config file for target constraint")
    p.add_argument("-x", "--exclude", action="append", default=[],
                   help="exclude specified functions")
    p.add_argument("-t", "--target", action="store_true",
                   help="specify function set is output for target format/device")
    p.add_argument("-q", "--query", default=None, help="query the detail of a function")
    p.add_argument("--nnp-no-expand-network", action="store_true",
                   help="[import][NNP] expand network with repeat or recurrent.")
    p.add_argument("--api", type=int, default=0, help="List up api levels")
    p.set_defaults(func=function_info_command)
