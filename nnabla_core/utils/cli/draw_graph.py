"""``nnabla_cli draw_graph``: draw the networks of an NNP file with graphviz.

For each network (``-n``, repeatable; default: all) the graph is written in graphviz's
language to ``<output-dir>/<network>.dot`` (spaces in the name become ``_``) and, when
graphviz's ``dot`` program is installed, rendered to ``<network>.<format>`` (``-f``, default
``png``); the ``.dot`` source is then removed, as nnabla does. Without ``dot`` the source is
kept and a message says how to render it. Functions are boxes labelled with their type,
variables are ellipses labelled with their name and shape (parameters grey).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from argparse import RawTextHelpFormatter

from ..._atomic import write_atomically
from .utility import logger


def _quote(text):
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def dot_source(graph, name):
    """The graphviz source of a built network graph (``NnpNetwork.proto_network``)."""
    lines = [f"digraph {_quote(name)} {{", "  rankdir=TB;"]
    declared = {}
    for group, style in ((graph.variables, ""), (graph.parameters, ", style=filled, "
                                                                   "fillcolor=lightgray")):
        for var_name, var in group.items():
            instance = var.variable_instance
            shape = tuple(instance.shape) if instance is not None else var.shape
            declared[var_name] = f"v{len(declared)}"
            label = f"{var_name}\n{shape}"
            lines.append(f"  {declared[var_name]} [shape=ellipse, label={_quote(label)}{style}];")
    for index, f in enumerate(graph.functions.values()):
        if f.disabled:
            continue
        node = f"f{index}"
        lines.append(f"  {node} [shape=box, label={_quote(f.type)}, tooltip={_quote(f.name)}];")
        lines += [f"  {declared[i]} -> {node};" for i in f.inputs if i in declared]
        lines += [f"  {node} -> {declared[o]};" for o in f.outputs if o in declared]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render(source_path, target, fmt):
    dot = shutil.which("dot")
    if dot is None:
        logger.warning(f"graphviz's 'dot' program is not installed: kept the graph source "
                       f"{source_path} (render it with: dot -T{fmt} {source_path} -o {target})")
        return False
    subprocess.run([dot, f"-T{fmt}", source_path, "-o", target], check=True)
    os.remove(source_path)
    return True


def draw_graph_command(args):
    """Draw the networks of ``args.input`` into ``args.output_dir``."""
    from ..nnp_graph import NnpLoader

    logger.info(f"Loading: {args.input}")
    nnp = NnpLoader(args.input)
    names = nnp.get_network_names()
    logger.info(f"Available networks: {names!r}")
    if args.network:
        missing = [n for n in args.network if n not in names]
        if missing:
            raise ValueError(f"nnabla_cli draw_graph: no network {missing[0]!r} in "
                             f"{args.input!r}; it has {names}")
    os.makedirs(args.output_dir, exist_ok=True)
    for name in args.network or names:
        logger.info(f"Drawing: {name}")
        network = nnp.get_network(name)
        if not network.outputs:
            logger.info(f"No output in `{name}`. Skipping.")
            continue
        base = os.path.join(args.output_dir, name.replace(" ", "_"))
        source = dot_source(network.proto_network, name)
        write_atomically(base + ".dot", lambda stream: stream.write(source), "w")
        _render(base + ".dot", f"{base}.{args.format}", args.format)
    return True


def add_draw_graph_command(subparsers):
    """Register ``draw_graph``."""
    description = """Draw a graph in a NNP or nntxt file with graphviz.

Example:

    nnabla_cli draw_graph -o output-folder path-to-nnp.nnp"""
    p = subparsers.add_parser("draw_graph", formatter_class=RawTextHelpFormatter,
                              description=description,
                              help="Draw a graph in a NNP or nntxt file with graphviz.")
    p.add_argument("input", type=str, help="Path to input nnp or nntxt.")
    p.add_argument("-o", "--output-dir", type=str, default="draw_out", help="Output directory.")
    p.add_argument("-n", "--network", action="append", help="Network names to be drawn.")
    p.add_argument("-f", "--format", default="png",
                   help="Graph saving format compatible with graphviz (`pdf`, `png`, ...).")
    p.set_defaults(func=draw_graph_command)
    return p
