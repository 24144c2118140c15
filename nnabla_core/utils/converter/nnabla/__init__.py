"""NNP import and export for ``nnabla.utils.converter``."""
from .exporter import NnpExporter  # noqa: F401
from .importer import NnpExpander, NnpImporter  # noqa: F401
