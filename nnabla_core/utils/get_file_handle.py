"""File handles for the NNP family of formats (``nnabla.utils.get_file_handle``).

:func:`get_file_handle_load` and :func:`get_file_handle_save` open a path, a file object or
an archive member in the mode its format needs (zip archive for ``.nnp``, HDF5 for ``.h5``,
text for ``.nntxt``/``.prototxt``, binary for ``.protobuf``); :func:`get_buf_type` reads the
format of a solver-state member name. The loaders and savers of :mod:`nnabla.utils.load`,
:mod:`nnabla.utils.save` and ``nn.load_parameters`` do their own checked reading
(:mod:`nnabla.utils._nnp_archive`); these handles are the raw access nnabla offers.

Example:
    >>> from nnabla.utils.get_file_handle import get_buf_type
    >>> get_buf_type("opt_Adam_optimizer.h5.optimizer")
    'h5'
"""
from __future__ import annotations

import contextlib
import io
import os
import zipfile

__all__ = ["FileHandlerContext", "get_buf_type", "get_file_handle_load",
           "get_file_handle_save"]

_TEXT = (".nntxt", ".prototxt")


class FileHandlerContext:
    """A plain namespace shared by loaders and savers (``proto``, ``parameters`` ...)."""


def _unsupported(ext):
    return ValueError(f"get_file_handle: extension {ext!r} is not supported; expected .nnp, "
                      f".h5, .nntxt, .prototxt or .protobuf")


@contextlib.contextmanager
def get_file_handle_load(nnp, path, ext):
    """Open ``path`` for reading as format ``ext``.

    Args:
        nnp (zipfile.ZipFile or None): when given, ``path`` names a member of it.
        path (str or file object): the file (or member name).
        ext (str): ``'.nnp'`` (yields a ``ZipFile``), ``'.h5'`` (an ``h5py.File``),
            ``'.nntxt'``/``'.prototxt'`` (text), ``'.protobuf'`` (binary).

    Yields:
        The open handle; closed on exit when this function opened it.
    """
    if nnp is not None:
        if ext == ".h5":
            import h5py

            with nnp.open(path, "r") as member, h5py.File(io.BytesIO(member.read()),
                                                          "r") as handle:
                yield handle
        else:
            with nnp.open(path, "r") as member:
                yield member
        return
    is_path = isinstance(path, (str, os.PathLike))
    if ext == ".nnp":
        with zipfile.ZipFile(path, "r") as handle:
            yield handle
    elif ext == ".h5":
        import h5py

        source = path if is_path else io.BytesIO(path.read())
        with h5py.File(source, "r") as handle:
            yield handle
    elif ext in _TEXT + (".protobuf",):
        if not is_path:
            yield path
            return
        with open(path, "r" if ext in _TEXT else "rb") as handle:
            yield handle
    else:
        raise _unsupported(ext)


@contextlib.contextmanager
def get_file_handle_save(path, ext):
    """Open ``path`` for writing as format ``ext`` (see :func:`get_file_handle_load`).

    A file object is yielded as is and rewound afterwards, as nnabla does.
    """
    is_path = isinstance(path, (str, os.PathLike))
    try:
        if ext == ".nnp":
            with zipfile.ZipFile(path, "w") as handle:
                yield handle
        elif ext == ".h5":
            import h5py

            with h5py.File(path, "w") as handle:
                yield handle
        elif ext in _TEXT + (".protobuf",):
            if not is_path:
                yield path
            else:
                with open(path, "w" if ext in _TEXT else "wb") as handle:
                    yield handle
        else:
            raise _unsupported(ext)
    finally:
        if hasattr(path, "seek"):
            path.seek(0)


def get_buf_type(filename):
    """The format of a solver-state member name: ``'h5'`` or ``'protobuf'``.

    The name is ``<optimizer>_<Solver>_optimizer.<format>.optimizer``; the format is read
    after the last ``_``.
    """
    return filename.split("_")[-1].split(".")[1].lower()
