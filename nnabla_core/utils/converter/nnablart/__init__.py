"""Exporters for the nnabla C runtime (NNabla-RT): the NNB binary format and C sources."""
from .csrc import CsrcExporter  # noqa: F401
from .nnb import NnbExporter  # noqa: F401
