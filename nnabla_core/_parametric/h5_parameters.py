"""Reading and writing nnabla's ``.h5`` parameter files, defensively.

Layout (compatible with nnabla): one dataset per parameter at its '/'-joined name
(scopes become HDF5 groups); each dataset has attributes ``need_grad`` (bool) and
``index`` (int, the parameter's position, used to restore the order on load).

Reading never follows HDF5 external or soft links, refuses datasets with external
storage or virtual (multi-file) layouts, and reports any corrupt, truncated or non-HDF5
input as ``ValueError`` naming the file and the problem. Writing to a path goes through
a temporary file in the same folder, flushed and then renamed over the target.
"""

import importlib
import io
import os

import numpy

from .._atomic import write_path_atomically

def _h5py():
    """h5py, imported on first use: at ``import nnabla`` it would cost ~30 ms and ~5,000
    objects that every full garbage collection then walks."""
    return importlib.import_module("h5py")


_LOAD = "nn.load_parameters"
_SAVE = "nn.save_parameters"


def _describe(source):
    return repr(os.fspath(source)) if isinstance(source, (str, os.PathLike)) else "<file object>"


def _open_for_reading(source):
    """Opens ``source`` (path or file object) as a read-only HDF5 file."""
    if isinstance(source, (str, os.PathLike)):
        if not os.path.exists(source):
            raise FileNotFoundError(f"{_LOAD}: argument 'path': no such parameter file: "
                                    f"{_describe(source)}")
        target = os.fspath(source)
    else:
        # a BytesIO at its start is shared, not copied (its getvalue() is the same bytes)
        at_start = isinstance(source, io.BytesIO) and source.tell() == 0
        data = source.getvalue() if at_start else source.read()
        target = io.BytesIO(data)
    try:
        return _h5py().File(target, "r")
    except (OSError, ValueError) as error:
        raise ValueError(
            f"{_LOAD}: {_describe(source)} is not a readable HDF5 parameter file "
            f"(corrupt, truncated or another format): {error}") from None


def _datasets(handle):
    """``(path, dataset)`` of every dataset, from one traversal of the file's links; refuses
    links that are not hard links (soft and external links are never followed)."""
    h5py = _h5py()
    links = []
    handle.id.links.visit(lambda name, info: links.append((name, info.type)), info=True)
    found = []
    for raw, kind in links:
        path = raw.decode("utf-8", "surrogateescape")
        if kind == h5py.h5l.TYPE_EXTERNAL:
            raise ValueError(f"{_LOAD}: '{path}' is an HDF5 external link to "
                             f"{handle.get(path, getlink=True).filename!r}; external links "
                             f"are refused")
        if kind != h5py.h5l.TYPE_HARD:
            raise ValueError(f"{_LOAD}: '{path}' is an HDF5 soft link; parameter files "
                             f"hold datasets only")
        item = handle[path]
        if isinstance(item, h5py.Dataset):
            found.append((path, item))
    return found


def _read_dataset(dataset, path):
    """Returns (values, need_grad, index) of one parameter dataset, after checks."""
    if dataset.external:
        raise ValueError(f"{_LOAD}: dataset '{path}' uses external storage; refused")
    if dataset.is_virtual:
        raise ValueError(f"{_LOAD}: dataset '{path}' is a virtual dataset; refused")
    if dataset.dtype.kind not in "biuf":
        raise ValueError(f"{_LOAD}: dataset '{path}' has dtype {dataset.dtype}; expected a "
                         f"numeric (bool, integer or float) array")
    attrs = dataset.attrs
    need_grad = attrs.get("need_grad")
    if need_grad is None:
        raise ValueError(f"{_LOAD}: dataset '{path}' lacks the 'need_grad' attribute of an "
                         f"nnabla parameter")
    index = attrs.get("index")
    values = numpy.asarray(dataset[()])
    index = None if index is None else int(numpy.asarray(index).item())
    return values, bool(numpy.asarray(need_grad).item()), index


def read_parameter_file(source):
    """Reads every parameter of an nnabla ``.h5`` parameter file.

    Args:
        source (str, os.PathLike or file object): The file.

    Returns:
        list of (str, numpy.ndarray, bool): ``(name, values, need_grad)`` in the
        stored ``index`` order (datasets without an index last, by name).

    Raises:
        FileNotFoundError: If the path does not exist.
        ValueError: If the file is not HDF5, is damaged, uses links/external storage,
            or a dataset is not a parameter; the message names the file or dataset.
    """
    handle = _open_for_reading(source)
    try:
        entries = []
        for path, dataset in _datasets(handle):
            values, need_grad, index = _read_dataset(dataset, path)
            entries.append((index, path, values, need_grad))
    except (OSError, RuntimeError, KeyError) as error:
        raise ValueError(f"{_LOAD}: {_describe(source)} is damaged or truncated: "
                         f"{error}") from None
    finally:
        handle.close()
    entries.sort(key=lambda e: (e[0] is None, e[0] if e[0] is not None else 0, e[1]))
    return [(path, values, need_grad) for _, path, values, need_grad in entries]


def _check_names(params):
    """Raises when a parameter name is also the scope of another parameter."""
    names = set(params)
    for name in names:
        parts = name.split("/")
        for cut in range(1, len(parts)):
            prefix = "/".join(parts[:cut])
            if prefix in names:
                raise ValueError(f"{_SAVE}: parameter name '{prefix}' is also the scope of "
                                 f"'{name}'; HDF5 cannot store both")


def _write(handle, params):
    for index, (name, variable) in enumerate(params.items()):
        handle[name] = numpy.asarray(variable.d)
        handle[name].attrs["need_grad"] = bool(variable.need_grad)
        handle[name].attrs["index"] = index


def write_parameter_file(target, params):
    """Writes ``params`` as an nnabla ``.h5`` parameter file.

    Args:
        target (str, os.PathLike or file object): Destination. A path is written
            atomically (temporary file in the same folder, then ``os.replace``).
        params (dict): ``{name: Variable}``; the insertion order becomes ``index``.

    Raises:
        ValueError: If names collide (``a`` and ``a/b``) or a name is empty.
    """
    if any(not str(name).strip("/") for name in params):
        raise ValueError(f"{_SAVE}: parameter names must not be empty")
    _check_names(params)
    h5py = _h5py()
    if not isinstance(target, (str, os.PathLike)):
        with h5py.File(target, "w") as handle:
            _write(handle, params)
        return

    def write(tmp):
        with h5py.File(tmp, "w") as handle:
            _write(handle, params)

    write_path_atomically(target, write)
