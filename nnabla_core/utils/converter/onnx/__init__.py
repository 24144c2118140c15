"""NNP <-> ONNX for ``nnabla.utils.converter`` (needs the ``onnx`` package:
``pip install nnabla[onnx]``)."""


def require_onnx():
    """The ``onnx`` module, or an ImportError saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise ImportError("nnabla.utils.converter: ONNX conversion needs the 'onnx' package; "
                          "install it with: pip install 'nnabla[onnx]'") from None
    return onnx


def __getattr__(name):
    if name == "OnnxExporter":
        from .exporter import OnnxExporter
        return OnnxExporter
    if name == "OnnxImporter":
        from .importer import OnnxImporter
        return OnnxImporter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
