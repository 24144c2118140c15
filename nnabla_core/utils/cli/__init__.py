"""``nnabla_cli`` subcommands (``nnabla.utils.cli``): one module per group of subcommands,
each with an ``add_<name>_command(subparsers)`` and a ``<name>_command(args)`` that returns
True on success. The entry point is :func:`nnabla.utils.cli.cli.main`."""
