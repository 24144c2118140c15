"""``nnabla_cli plot_series`` / ``plot_timer``: plot monitor files with matplotlib.

``plot_series`` draws ``*.series.txt`` files (``nnabla.monitor.MonitorSeries``),
``plot_timer`` draws ``*.timer.txt`` files (``MonitorTimeElapsed``: time per iteration, or the
total with ``-e``). With ``-o FILE`` the figure is saved (Agg backend), otherwise shown.
"""
from __future__ import annotations

from argparse import RawTextHelpFormatter

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def plot_series_command(args):
    """Plot ``args.inputs`` (series files)."""
    from ... import monitor as M

    plot_any_command(args, M.plot_series)
    return True


def plot_timer_command(args):
    """Plot ``args.inputs`` (timer files)."""
    from ... import monitor as M

    if args.time_unit not in _UNITS:
        raise ValueError(f"nnabla_cli plot_timer: -u/--time-unit must be one of s, m, h, d; "
                         f"given {args.time_unit!r}")
    if not args.ylabel:
        unit = _UNITS[args.time_unit]
        args.ylabel = f"Total elapsed time [{unit}]" if args.elapsed else \
            f"Elapsed time [{unit}/iter]"
    plot_any_command(args, M.plot_time_elapsed, dict(elapsed=args.elapsed, unit=args.time_unit))
    return True


def plot_any_command(args, plot_func, plot_func_kwargs=None):
    """One figure with a line per input file, labelled, limited and titled as asked."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("nnabla_cli plot_series/plot_timer need matplotlib: "
                          "pip install 'nnabla[utils]'") from None
    if args.outfile:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = args.label or []
    figure = plt.figure()
    for i, path in enumerate(args.inputs):
        label = labels[i] if len(labels) > i else path
        plot_func(path, plot_kwargs=dict(label=label), **(plot_func_kwargs or {}))
    plt.legend(loc="best")
    if args.title:
        plt.title(args.title)
    if args.xlabel:
        plt.xlabel(args.xlabel)
    if args.ylabel:
        plt.ylabel(args.ylabel)
    if args.xlim_min is not None:
        plt.xlim(left=args.xlim_min)
    if args.xlim_max is not None:
        plt.xlim(right=args.xlim_max)
    if args.ylim_min is not None:
        plt.ylim(bottom=args.ylim_min)
    if args.ylim_max is not None:
        plt.ylim(top=args.ylim_max)
    if args.outfile:
        plt.savefig(args.outfile)
        plt.close(figure)
        return
    plt.show()


def add_plot_any_command(subparsers, subcommand, help, description, plot_command,
                         ylabel_default=""):
    """Register a plot subcommand with the common options."""
    p = subparsers.add_parser(subcommand, formatter_class=RawTextHelpFormatter,
                              description=description, help=help)
    p.add_argument("inputs", type=str, nargs="+", metavar="infile", help="Path to input file.")
    p.add_argument("-l", "--label", action="append", help="Label of each plot.")
    p.add_argument("-o", "--outfile", help="Path to output file.", type=str, default="")
    p.add_argument("-x", "--xlabel", help="X-axis label of plot.", default="")
    p.add_argument("-y", "--ylabel", help="Y-axis label of plot.", default=ylabel_default)
    p.add_argument("-t", "--title", help="Title of plot.", default="")
    p.add_argument("-T", "--ylim-max", help="Y-axis plot range max.", type=float, default=None)
    p.add_argument("-B", "--ylim-min", help="Y-axis plot range min.", type=float, default=None)
    p.add_argument("-R", "--xlim-max", help="X-axis plot range max.", type=float, default=None)
    p.add_argument("-L", "--xlim-min", help="X-axis plot range min.", type=float, default=None)
    p.set_defaults(func=plot_command)
    return p


def add_plot_series_command(subparsers):
    """Register ``plot_series``."""
    description = """Plot *.series.txt files produced by nnabla.MonitorSeries class.

Example:

    nnabla_cli plot_series -x "Epochs" -y "Squared error loss" -T 10 -l "config A" \\
        -l "config B" result_a/Training-loss.series.txt result_b/Training-loss.series.txt"""
    add_plot_any_command(subparsers, "plot_series", "Plot *.series.txt files.", description,
                         plot_series_command)


def add_plot_timer_command(subparsers):
    """Register ``plot_timer``."""
    description = """Plot *.timer.txt files produced by nnabla.MonitorTimeElapsed class.

Example:

    nnabla_cli plot_timer -x "Epochs" -l "config A" -l "config B" \\
        result_a/Epoch-time.timer.txt result_b/Epoch-time.timer.txt"""
    p = add_plot_any_command(subparsers, "plot_timer", "Plot *.timer.txt files.", description,
                             plot_timer_command)
    p.add_argument("-e", "--elapsed", action="store_true",
                   help="Plot total elapsed time. By default, it plots elapsed time per "
                        "iteration.")
    p.add_argument("-u", "--time-unit", help="Time unit chosen from {s|m|h|d}.", default="s")
