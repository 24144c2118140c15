"""``nnabla_cli``: the command-line interface (``nnabla.utils.cli.cli``).

``main(argv)`` prints nnabla's banner line, parses the subcommand and runs it. It returns 0
when the subcommand succeeded; otherwise it prints the error and returns 255 (nnabla exits
with -1). ``-m/--mpi`` runs the subcommand with an MPI communicator (``mpiexec -n N
nnabla_cli -m train ...``).
"""
from __future__ import annotations

import argparse
import sys
import traceback

from .. import callback

__all__ = ["main", "nnabla_version"]

FAILED = 255
_PLAIN_ERRORS = (NotImplementedError, ImportError, ConnectionError)


def nnabla_version():
    """``Version:<version>, Build:<build>[, Callback:<version>]``, as nnabla prints it."""
    import nnabla

    build = getattr(nnabla, "__build_number__", None) or f"core{nnabla.__core_version__}"
    text = f"Version:{nnabla.__version__}, Build:{build}"
    callback_version = callback.get_callback_version()
    if callback_version is not None:
        text += f", Callback:{callback_version}"
    return text


def version_command(args):
    print(nnabla_version())
    return True


def _plugins_command(args):
    import json

    import nnabla
    from nnabla.ext_utils import list_plugins

    nnabla.plugins.REGISTRY.activate_all()   # to show what each registered; never raises
    rows = list_plugins()
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return True
    print(f"{'plugin':<12} {'distribution':<20} {'version':<10} {'status':<10} "
          f"registered / reason")
    for r in rows:
        detail = r["reason"] or json.dumps(r["registered"], default=str)
        print(f"{r['name']:<12} {r['distribution']:<20} {r['version']:<10} {r['status']:<10} "
              f"{detail}")
    return True


def _add_commands(subparsers):
    from . import (compare_with_cpu, conv_dataset, convert, create_image_classification_dataset,
                   create_object_detection_dataset, draw_graph, encode_decode_param, forward,
                   func_info, optimize_model, plot, profile, train, uploader)

    train.add_train_command(subparsers)
    forward.add_infer_command(subparsers)
    forward.add_forward_command(subparsers)
    encode_decode_param.add_encode_param_command(subparsers)
    encode_decode_param.add_decode_param_command(subparsers)
    profile.add_profile_command(subparsers)
    conv_dataset.add_conv_dataset_command(subparsers)
    compare_with_cpu.add_compare_with_cpu_command(subparsers)
    create_image_classification_dataset.add_create_image_classification_dataset_command(
        subparsers)
    create_object_detection_dataset.add_create_object_detection_dataset_command(subparsers)
    uploader.add_upload_command(subparsers)
    uploader.add_create_tar_command(subparsers)
    convert.add_convert_command(subparsers)
    func_info.add_function_info_command(subparsers)
    optimize_model.add_optimize_command(subparsers)
    plot.add_plot_series_command(subparsers)
    plot.add_plot_timer_command(subparsers)
    draw_graph.add_draw_graph_command(subparsers)
    subparser = subparsers.add_parser("version", help="Print version and build number.")
    subparser.set_defaults(func=version_command)
    subparser = subparsers.add_parser(
        "plugins", help="List installed backend plugins, versions, status and registrations.")
    subparser.add_argument("--json", action="store_true", help="print JSON")
    subparser.set_defaults(func=_plugins_command)


def make_parser():
    """The argument parser of ``nnabla_cli`` with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="nnabla_cli",
        description=f"Command line interface for NNabla({nnabla_version()})")
    parser.add_argument("-m", "--mpi", help="exec with mpi.", action="store_true")
    _add_commands(parser.add_subparsers())
    return parser


def _run(args):
    if not args.mpi:
        return args.func(args)
    from .utility import create_communicator, set_communicator

    create_communicator()
    try:
        return args.func(args)
    finally:
        set_communicator(None)


def main(argv=None):
    """Run ``nnabla_cli`` with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        int: 0 on success, 255 when the subcommand failed or raised (its traceback is
        printed).
    """
    parser = make_parser()
    print(f"NNabla command line interface ({nnabla_version()})")
    sys.stdout.flush()
    args = parser.parse_args(argv)
    alternative = callback.alternative_cli(args)
    if alternative is not None:
        return alternative
    if "func" not in args:
        parser.print_help(sys.stderr)
        return FAILED
    try:
        succeeded = _run(args)
    except _PLAIN_ERRORS as error:
        # missing optional parts or network access: the message says it all
        print(f"nnabla_cli: error: {error}", file=sys.stderr)
        return FAILED
    except Exception:
        print(traceback.format_exc(), file=sys.stderr)
        return FAILED
    return 0 if succeeded else FAILED
