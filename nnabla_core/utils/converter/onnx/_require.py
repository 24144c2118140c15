"""The optional ``onnx`` dependency."""


def require_onnx():
    """The ``onnx`` module, or an ImportError saying how to install it."""
    try:
        import onnx
    except ImportError:
        raise ImportError("nnabla.utils.converter: ONNX conversion needs the 'onnx' package; "
                          "install it with: pip install 'nnabla[onnx]'") from None
    return onnx
