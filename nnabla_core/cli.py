"""``nnabla_cli`` (and ``python -m nnabla``): the command-line interface.

The subcommands live in :mod:`nnabla.utils.cli` as in nnabla; this module is the console
entry point.
"""
from __future__ import annotations

import sys

from .utils.cli.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
