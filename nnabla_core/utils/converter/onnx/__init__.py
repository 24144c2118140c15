"""NNP <-> ONNX for ``nnabla.utils.converter`` (needs the ``onnx`` package:
``pip install nnabla[onnx]``)."""


from ._require import require_onnx  # noqa: F401


def __getattr__(name):
    if name == "OnnxExporter":
        from .exporter import OnnxExporter
        return OnnxExporter
    if name == "OnnxImporter":
        from .importer import OnnxImporter
        return OnnxImporter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
