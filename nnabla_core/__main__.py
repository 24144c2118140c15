"""``python -m nnabla``: the command-line interface (same as ``nnabla_cli``)."""
from .cli import main

raise SystemExit(main())
