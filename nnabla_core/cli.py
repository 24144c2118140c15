"""``nnabla_cli``: command-line tools.

Subcommands: ``plugins`` (installed plugins, versions, status, registrations),
``function_info`` (the function spec table), ``version``.
"""
from __future__ import annotations

import argparse
import json
import sys


def _plugins(args):
    import nnabla
    from nnabla.ext_utils import list_plugins
    nnabla.plugins.REGISTRY.activate_all()   # to show what each registered; never raises
    rows = list_plugins()
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    print(f"{'plugin':<12} {'distribution':<20} {'version':<10} {'status':<10} registered / reason")
    for r in rows:
        detail = r["reason"] or json.dumps(r["registered"], default=str)
        print(f"{r['name']:<12} {r['distribution']:<20} {r['version']:<10} {r['status']:<10} "
              f"{detail}")
    return 0


def _function_info(args):
    from nnabla._spec import SPECS
    info = {}
    for spec in SPECS.values():
        info[spec.name] = {
            "snake_name": spec.snake, "category": spec.category,
            "inputs": [i.name for i in spec.inputs],
            "arguments": {a.name: {"type": a.kind, "default": repr(a.default)} for a in spec.args},
            "outputs": [o.name for o in spec.outputs],
        }
    text = json.dumps(info, indent=2)
    if args.dest:
        with open(args.dest, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


def _version(args):
    import nnabla
    print(f"nnabla {nnabla.__version__} (core {nnabla.__core_version__})")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="nnabla_cli")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("plugins", help="list installed plugins")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_plugins)
    p = sub.add_parser("function_info", help="print the function spec table as JSON")
    p.add_argument("dest", nargs="?")
    p.set_defaults(func=_function_info)
    p = sub.add_parser("version", help="print versions")
    p.set_defaults(func=_version)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
