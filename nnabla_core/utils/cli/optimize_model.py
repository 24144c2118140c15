"""``nnabla_cli optimize``: optimize an ``.nnp`` model (or a TensorFlow ``.pb``).

An ``.nnp`` is loaded with ``nn.graph_def.load``, optimized by
``nnabla.utils.converter.nnabla.optimizer.optimize_nnp`` and saved; a ``.pb`` needs
TensorFlow and nnabla's TensorFlow converter.
"""
from __future__ import annotations

import os

from ._converter import converter_function


def optimize_nnp_model_command(input_file, output_file):
    """Optimize ``input_file`` (.nnp) into ``output_file`` (.nnp)."""
    optimize_nnp = converter_function("optimize_nnp", "optimize",
                                      module="nnabla.utils.converter.nnabla.optimizer")
    graph_def = converter_function("graph_def", "optimize", module="nnabla")
    graph = graph_def.load(input_file)
    network = optimize_nnp(graph)
    graph.networks[network.name] = network
    graph.save(output_file)


def optimize_pb_model_command(input_pb_file, output_pb_file):
    """Optimize a TensorFlow frozen graph (needs TensorFlow and the TF converter)."""
    converter_function("OptimizePb", "optimize (.pb)",
                       module="nnabla.utils.converter.tensorflow.common")
    raise NotImplementedError("nnabla_cli optimize: .pb models are not supported by this "
                              "nnabla (no TensorFlow converter)")


def optimization_command(args):
    """Optimize ``args.input_file[0]`` into ``args.output_file[0]``."""
    input_file, output_file = args.input_file[0], args.output_file[0]
    ext = os.path.splitext(input_file)[1]
    if ext not in (".pb", ".nnp"):
        raise ValueError(f"{ext} is unsupported file format.")
    if os.path.splitext(output_file)[1] != ext:
        raise ValueError("Input or output file format error.")
    if ext == ".pb":
        optimize_pb_model_command(input_file, output_file)
    else:
        optimize_nnp_model_command(input_file, output_file)
    return True


def add_optimize_command(subparsers):
    """Register ``optimize``."""
    p = subparsers.add_parser("optimize", help="Optimize pb model.")
    p.add_argument("input_file", nargs=1, help="Input pre-optimized pb model.")
    p.add_argument("output_file", nargs=1, help="Output optimized pb model.")
    p.set_defaults(func=optimization_command)
