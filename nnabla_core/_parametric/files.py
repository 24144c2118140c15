"""Parameter files: format dispatch of ``nn.save_parameters`` / ``nn.load_parameters``.

Only ``.h5`` is implemented (see :mod:`h5_parameters`); the protobuf-based formats
raise ``NotImplementedError`` naming the extension.
"""

import os

from . import h5_parameters

_PROTOBUF_FORMATS = (".protobuf", ".nntxt", ".prototxt", ".nnp")


def _file_extension(path, extension, api):
    if isinstance(path, (str, os.PathLike)):
        return os.path.splitext(os.fspath(path))[1]
    if extension is None:
        raise ValueError(f"{api}: argument 'extension' is required when 'path' is a file "
                         f"object (e.g. extension='.h5')")
    return extension


def _unsupported(ext, api):
    if ext in _PROTOBUF_FORMATS:
        return NotImplementedError(f"{api}: the '{ext}' format is not supported yet; use .h5")
    return ValueError(f"{api}: unsupported file extension {ext!r}; expected '.h5'")


def load_parameters(path, proto=None, needs_proto=False, extension=".nntxt"):
    """Loads parameters from a file and registers them under the current scope.

    Each dataset of an ``.h5`` file becomes the parameter of the same path, created if
    absent (with the stored ``need_grad``) and overwritten otherwise, in the stored
    ``index`` order. The whole file is read and checked before any parameter changes.

    Args:
        path (str, os.PathLike or file object): The file; its extension picks the
            format (``extension`` is used for file objects).
        proto: Unused for ``.h5``; returned as given.
        needs_proto (bool): Must be False (protobuf output is not supported yet).
        extension (str): Format of a file-object ``path``.

    Returns:
        The ``proto`` argument.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: If the file is not a valid parameter file (with the reason), or a
            stored shape differs from an existing parameter's shape.
        NotImplementedError: For ``.protobuf``/``.nntxt``/``.nnp`` or ``needs_proto``.
    """
    from .. import parameter as _registry  # imported here: parameter imports this module

    api = "nn.load_parameters"
    ext = _file_extension(path, extension, api)
    if ext != ".h5":
        raise _unsupported(ext, api)
    if needs_proto:
        raise NotImplementedError(f"{api}: needs_proto=True is not supported yet")
    entries = h5_parameters.read_parameter_file(path)
    for key, values, need_grad in entries:
        existing = _registry.get_parameter(key)
        if existing is not None and tuple(existing.shape) != values.shape:
            raise ValueError(
                f"{api}: parameter '{key}' in the file has shape {values.shape}; the existing "
                f"parameter has shape {tuple(existing.shape)}")
    for key, values, need_grad in entries:
        var = _registry.get_parameter_or_create(key, values.shape, need_grad=need_grad)
        var.data.cast(values.dtype)[...] = values
    return proto


def save_parameters(path, params=None, extension=None):
    """Saves parameters to a file (``.h5``), atomically.

    The file gets one dataset per parameter at its '/'-joined name, with attributes
    ``need_grad`` and ``index`` (the order). A path target is written to a temporary
    file in the same folder and renamed over ``path`` only when complete.

    Args:
        path (str, os.PathLike or file object): Destination.
        params (dict, optional): ``{name: Variable}``; all parameters under the current
            scope (including ``need_grad=False`` ones) when None.
        extension (str, optional): Format of a file-object ``path`` (e.g. ``'.h5'``).

    Raises:
        ValueError: For an unknown extension or parameter names that collide.
        NotImplementedError: For ``.protobuf``/``.nntxt``/``.nnp``.
    """
    from .. import parameter as _registry  # imported here: parameter imports this module

    api = "nn.save_parameters"
    ext = _file_extension(path, extension, api)
    if ext != ".h5":
        raise _unsupported(ext, api)
    if params is None:
        params = _registry.get_parameters(grad_only=False)
    h5_parameters.write_parameter_file(path, params)
