"""Parameter files: format dispatch of ``nn.save_parameters`` / ``nn.load_parameters``.

Only ``.h5`` is implemented (see :mod:`h5_parameters`); the protobuf-based formats
raise ``NotImplementedError`` naming the extension.
"""

import os

from . import h5_parameters  # noqa: F401 - nn.save_parameters / load_parameters use it


_PROTOBUF_FORMATS = (".protobuf", ".nntxt", ".prototxt", ".nnp")


def file_extension(path, extension, api):
    if isinstance(path, (str, os.PathLike)):
        return os.path.splitext(os.fspath(path))[1]
    if not (hasattr(path, "read") or hasattr(path, "write")):
        raise TypeError(f"{api}: argument 'path' is of type {type(path).__name__}; expected "
                        "a file name (str or os.PathLike) or a file object")
    if extension is None:
        raise ValueError(f"{api}: argument 'extension' is required when 'path' is a file "
                         f"object (e.g. extension='.h5')")
    return extension


def unsupported(ext, api):
    if ext in _PROTOBUF_FORMATS:
        return NotImplementedError(f"{api}: the '{ext}' format is not supported yet; use .h5")
    return ValueError(f"{api}: argument 'path' has an unsupported file extension {ext!r}; "
                      "expected '.h5'")


