"""Exporters for the nnabla C runtime (NNabla-RT): the NNB binary format."""
from .nnb import NnbExporter  # noqa: F401
