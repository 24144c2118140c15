"""Parameter registry: scopes, creation, lookup, saving and loading (``nnabla.parameter``).

Parameters live in a tree of ``OrderedDict`` scopes whose leaves are ``nnabla.Variable``
objects; a parameter's full name is its scope path joined with ``/`` (``conv1/conv/W``).
Parametric functions fetch parameters with :func:`get_parameter_or_create`, which returns
an *unlinked* view of the registered variable (same data and grad arrays), so changing
``need_grad`` on the returned variable never changes the registered one.

Example:
    >>> import nnabla as nn
    >>> from nnabla.parameter import get_parameter_or_create
    >>> nn.clear_parameters()
    >>> with nn.parameter_scope("net"):
    ...     with nn.parameter_scope("fc"):
    ...         w = get_parameter_or_create("W", (3, 2))
    >>> list(nn.get_parameters())
    ['net/fc/W']
    >>> nn.clear_parameters()
"""

from collections import OrderedDict
from contextlib import contextmanager

import numpy

from ._parametric import files as _files
from ._variable import Variable

__all__ = [
    "clear_parameters", "get_current_parameter_scope", "get_parameter", "get_parameter_or_create",
    "get_parameters", "load_parameters", "no_grad", "parameter_scope", "pop_parameter",
    "save_parameters", "set_parameter", "set_parameter_from_proto",
]

root_scope = OrderedDict()
current_scope = root_scope
current_no_grad = False
# While a parametric function runs: (scope, key, entry) of each parameter and scope it
# creates, so a call that fails removes them again (see :func:`_undo_log`).
_created = None

def get_current_parameter_scope():
    """Returns the current parameter scope.

    Returns:
        OrderedDict: The scope dictionary that new parameters are registered in.
    """
    return current_scope


@contextmanager
def no_grad(no_grad_=True):
    """Fetches parameters without gradients inside the ``with`` block.

    Only parameters obtained through :func:`get_parameter_or_create` (thus by parametric
    functions) are affected: they come back as unlinked variables with
    ``need_grad=False``. Plain ``F.*`` calls and the registered parameters are untouched.

    Args:
        no_grad_ (bool): Whether gradients are disabled inside the block.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.parameter import get_parameter_or_create
        >>> with nn.no_grad():
        ...     w = get_parameter_or_create("doc_no_grad_w", (2,))
        >>> w.need_grad, nn.get_parameters()["doc_no_grad_w"].need_grad
        (False, True)
        >>> nn.clear_parameters()
    """
    global current_no_grad
    previous = current_no_grad
    current_no_grad = no_grad_
    try:
        yield
    finally:
        current_no_grad = previous


def _split_path(name, api, arg="name"):
    """Splits a ``/``-separated name into its non-empty components."""
    if not isinstance(name, str):
        raise TypeError(f"{api}: argument '{arg}' must be a str; given {type(name).__name__}")
    return [part for part in name.strip("/").split("/") if part]


def _child_scope(scope, name, create):
    """Returns the sub-scope ``name`` of ``scope``, creating it when ``create`` is set."""
    child = scope.get(name)
    if child is None:
        if not create:
            return None
        child = scope[name] = OrderedDict()
        if _created is not None:
            _created.append((scope, name, child))
    if not isinstance(child, dict):
        raise ValueError(  # noqa: TRY004 (a name clash, not an argument of the wrong type)
            f"nn.parameter_scope: '{name}' is already a parameter, it cannot be used as a "
            f"scope name")
    return child


def _start_log():
    """Starts recording the parameters and scopes created; returns the outer record."""
    global _created
    outer, _created = _created, []
    return outer


def _end_log(outer, failed):
    """Stops recording (back to ``outer``); when the call ``failed``, removes what it
    created, so a parametric function that raises leaves the registry as it was."""
    global _created
    log, _created = _created, outer
    if failed:
        for scope, key, entry in reversed(log):
            if scope.get(key) is entry:
                del scope[key]
    elif outer is not None:
        outer.extend(log)           # an enclosing parametric function may still fail


@contextmanager
def parameter_scope(name, scope=None):
    """Opens (creating if needed) a named parameter scope for the ``with`` block.

    Nested blocks nest scopes, and ``parameter_scope("a/b")`` equals a ``b`` scope
    inside an ``a`` scope. The previous scope is restored on exit, even on error.

    Args:
        name (str): Scope name; ``/`` separates nested scope names.
        scope (dict, optional): A scope dictionary to start from instead of the
            current scope (e.g. one yielded earlier, or a fresh ``OrderedDict``).

    Yields:
        OrderedDict: The scope that is current inside the block.

    Raises:
        ValueError: If ``scope`` is not a dict or a path component names a parameter.
    """
    global current_scope
    if scope is None:
        scope = current_scope
    elif not isinstance(scope, dict):
        raise ValueError(
            f"nn.parameter_scope: argument 'scope' must be a dict; given {type(scope)}")
    for part in _split_path(name, "nn.parameter_scope"):
        scope = _child_scope(scope, part, create=True)
    previous = current_scope
    current_scope = scope
    try:
        yield current_scope
    finally:
        current_scope = previous


def _locate(key, api, create):
    """Returns (scope holding the leaf, leaf name) for a ``/``-separated key."""
    parts = _split_path(key, api, "key")
    if not parts:
        raise ValueError(f"{api}: argument 'key' is {key!r}; expected a parameter name (not "
                         "empty)")
    scope = current_scope
    for part in parts[:-1]:
        scope = _child_scope(scope, part, create)
        if scope is None:
            return None, parts[-1]
    return scope, parts[-1]


def get_parameter(key):
    """Returns the parameter registered as ``key`` under the current scope, or None.

    Args:
        key (str): Parameter name, relative to the current scope (``/`` allowed).

    Returns:
        nnabla.Variable or None: The registered variable itself (not unlinked).
    """
    scope, leaf = _locate(key, "nn.parameter.get_parameter", create=False)
    value = None if scope is None else scope.get(leaf)
    if isinstance(value, dict):
        raise ValueError(  # noqa: TRY004 (a name clash, not an argument of the wrong type)
            f"nn.parameter.get_parameter: '{key}' is a parameter scope, not a parameter")
    return value


def pop_parameter(key):
    """Removes the parameter ``key`` from the current scope and returns it (None if absent).

    Args:
        key (str): Parameter name, relative to the current scope.

    Returns:
        nnabla.Variable or None: The removed variable.
    """
    param = get_parameter(key)
    if param is not None:
        scope, leaf = _locate(key, "nn.parameter.pop_parameter", create=False)
        del scope[leaf]
    return param


def set_parameter(key, param):
    """Registers ``param`` as ``key`` under the current scope, replacing any previous one.

    Args:
        key (str): Parameter name, relative to the current scope (``/`` allowed).
        param (nnabla.Variable): The variable to register.
    """
    scope, leaf = _locate(key, "nn.parameter.set_parameter", create=True)
    if isinstance(scope.get(leaf), dict):
        raise ValueError(  # noqa: TRY004 (a name clash, not an argument of the wrong type)
            f"nn.parameter.set_parameter: '{key}' is a parameter scope, not a parameter")
    scope[leaf] = param


def _shape(api, shape):
    """``shape`` as a tuple of non-negative ints, or TypeError/ValueError naming ``api``."""
    from ._spec.args import Api, check_nonnegative, check_value
    shape = check_value(api, "shape", "ints", shape)
    check_nonnegative(Api(api), "shape", shape)
    return shape


def _create_parameter(name, initializer, shape, need_grad):
    """Creates a new parameter variable from ``initializer`` (None means zeros)."""
    api = "nn.parameter.get_parameter_or_create"
    if initializer is None:
        if shape is None:
            raise ValueError(f"{api}: parameter '{name}' needs a shape or an initializer")
        param = Variable(tuple(int(s) for s in shape), need_grad=need_grad)
        param.data.zero()
        return param
    if isinstance(initializer, numpy.ndarray):
        if shape is not None and tuple(shape) != initializer.shape:
            raise ValueError(
                f"{api}: argument 'initializer' (an array) for '{name}' has shape "
                f"{initializer.shape}; expected the requested shape {tuple(shape)}")
        return Variable.from_numpy_array(initializer, need_grad=need_grad)
    if callable(initializer):
        if shape is None:
            raise ValueError(f"{api}: parameter '{name}' needs a shape for its initializer")
        values = initializer(shape=[int(s) for s in shape])
        return Variable.from_numpy_array(numpy.asarray(values), need_grad=need_grad)
    raise ValueError(
        f"{api}: argument 'initializer' for '{name}' must be a numpy.ndarray or a callable "
        f"such as nnabla.initializer.BaseInitializer; given {type(initializer).__name__}")


def _create_parameter_by_initializer(initializer, shape, need_grad):
    """A new parameter variable from ``initializer`` (nnabla's name for it; None: zeros)."""
    return _create_parameter("<new parameter>", initializer, shape, need_grad)


class _ParameterInfo:
    """What a parameter was created with (kept as ``Variable.info``, as nnabla does)."""

    def __init__(self, initializer):
        self.initializer = initializer


def get_parameter_or_create(name, shape=None, initializer=None, need_grad=True,
                            as_need_grad=None):
    """Returns the parameter ``name`` of the current scope, creating it if absent.

    On creation, ``initializer`` gives the values (a callable taking ``shape``, a
    numpy array, or None for zeros); an existing parameter keeps its values and the
    initializer is not called. The registered ``need_grad`` is set to ``need_grad``.

    Args:
        name (str): Name under the current scope (``/`` opens sub-scopes).
        shape (tuple of int, optional): Shape; must match an existing parameter.
        initializer (callable or numpy.ndarray, optional): Initial values.
        need_grad (bool): ``need_grad`` of the registered parameter.
        as_need_grad (bool, optional): ``need_grad`` of the returned variable; defaults
            to ``need_grad``; forced to False inside :func:`no_grad`.

    Returns:
        nnabla.Variable: An unlinked variable sharing the parameter's arrays, named
        after the last component of ``name``.

    Raises:
        ValueError: If ``shape`` differs from the existing parameter's shape, or the
            initializer is unusable.
    """
    api = "nn.parameter.get_parameter_or_create"
    parts = _split_path(name, api)
    if not parts:
        raise ValueError(f"{api}: argument 'name' is {name!r}; expected a parameter name (not "
                         "empty)")
    if shape is not None:
        shape = _shape(api, shape)
    if len(parts) > 1:
        with parameter_scope("/".join(parts[:-1])):
            return get_parameter_or_create(parts[-1], shape, initializer, need_grad,
                                           as_need_grad)
    if as_need_grad is None:
        as_need_grad = need_grad
    if current_no_grad:
        as_need_grad = False
    param = get_parameter(name)
    if param is None:
        param = _create_parameter(name, initializer, shape, need_grad)
        try:
            param.info = _ParameterInfo(initializer)
        except AttributeError:  # a Variable implementation without free attributes
            pass
        set_parameter(name, param)
        if _created is not None:
            _created.append((current_scope, name, param))
    else:
        _check_existing_shape(name, param, shape, initializer)
        if param.need_grad != need_grad:
            param.need_grad = need_grad
    view = param.get_unlinked_variable(need_grad=as_need_grad)
    view.name = name
    return view


def _check_existing_shape(name, param, shape, initializer):
    """Raises when a requested shape disagrees with an existing parameter's shape."""
    if shape is None and isinstance(initializer, numpy.ndarray):
        shape = initializer.shape
    if shape is None or tuple(param.shape) == tuple(int(s) for s in shape):
        return
    scope_path = _scope_path(current_scope)
    full = f"{scope_path}/{name}" if scope_path else name
    raise ValueError(
        f"nn.parameter.get_parameter_or_create: existing parameter '{full}' has shape "
        f"{tuple(param.shape)}; requested {tuple(shape)}. Call nn.clear_parameters() "
        f"or use another parameter_scope to create a parameter of a new shape")


def _scope_path(target, scope=None, path=""):
    """Returns the '/'-joined path of scope ``target`` from the root ('' if not found)."""
    scope = root_scope if scope is None else scope
    for key, value in scope.items():
        if isinstance(value, dict):
            sub = f"{path}/{key}" if path else key
            if value is target:
                return sub
            found = _scope_path(target, value, sub)
            if found:
                return found
    return ""


def get_parameters(params=None, path="", grad_only=True):
    """Returns the parameters under the current scope, keyed by their '/'-joined names.

    Args:
        params (dict, optional): A dict to add to (internal use); a new
            ``OrderedDict`` when None.
        path (str): Prefix of the returned names (internal use).
        grad_only (bool): If True, only parameters with ``need_grad=True``.

    Returns:
        OrderedDict: ``{name: nnabla.Variable}`` in registration order; the values are
        the registered variables themselves.
    """
    if params is None:
        params = OrderedDict()
    elif not isinstance(params, dict):
        raise TypeError(f"nn.get_parameters: argument 'params' is of type "
                        f"{type(params).__name__}; expected a dict to add to, or None")
    if not isinstance(path, str):
        raise TypeError(f"nn.get_parameters: argument 'path' is of type {type(path).__name__}; "
                        "expected a str (the prefix of the names)")
    _collect(current_scope, params, path, grad_only)
    return params


def _collect(scope, params, path, grad_only):
    for key, value in scope.items():
        full = f"{path}/{key}" if path else key
        if isinstance(value, dict):
            _collect(value, params, full, grad_only)
        elif not grad_only or value.need_grad:
            params[full] = value


def clear_parameters():
    """Removes every parameter and sub-scope of the current scope."""
    current_scope.clear()


def set_parameter_from_proto(proto):
    """Creates or overwrites parameters from a protobuf message's ``parameter`` entries.

    Args:
        proto: An object with a ``parameter`` sequence whose items have
            ``variable_name``, ``shape.dim``, ``data`` and ``need_grad`` (nnabla's
            ``NNablaProtoBuf`` layout).
    """
    for parameter in proto.parameter:
        dims = tuple(parameter.shape.dim)
        var = get_parameter_or_create(parameter.variable_name, dims,
                                      need_grad=parameter.need_grad)
        var.d = numpy.reshape(numpy.asarray(parameter.data, dtype=numpy.float32), dims)


def load_parameters(path, proto=None, needs_proto=False, extension=".nntxt"):
    """Loads parameters from a file and registers them under the current scope.

    Each stored parameter becomes the parameter of the same path, created if absent (with
    the stored ``need_grad``) and overwritten otherwise, in the stored order. The whole file
    is read and checked before any parameter changes. Formats: ``.h5`` (one dataset per
    parameter), ``.protobuf`` and ``.nntxt``/``.prototxt`` (an ``NNablaProtoBuf`` whose
    ``parameter`` entries are read; its other content is merged into the returned proto),
    ``.nnp`` (every parameter member of the archive).

    Args:
        path (str, os.PathLike or file object): The file; its extension picks the
            format (``extension`` is used for file objects).
        proto (nnabla.utils.nnabla_pb2.NNablaProtoBuf, optional): The message protobuf
            content is merged into; a new one when None.
        needs_proto (bool): Also add the parameters of an ``.h5`` file to the proto.
        extension (str): Format of a file-object ``path``.

    Returns:
        nnabla.utils.nnabla_pb2.NNablaProtoBuf: The proto (as nnabla returns it).

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        ValueError: If the file is not a valid parameter file (with the reason, naming the
            file and member), or a stored shape differs from an existing parameter's shape.
    """
    api = "nn.load_parameters"
    ext = _files.file_extension(path, extension, api)
    if ext == ".h5" and proto is None and not needs_proto:
        entries = _files.h5_parameters.read_parameter_file(path)
        register_loaded(entries, api)
        return _empty_proto()
    from .utils import _nnp_parameters

    if ext not in _nnp_parameters.PARAMETER_EXTENSIONS:
        raise _unsupported_extension(ext, api)
    if proto is None:
        proto = _empty_proto()
    entries = _nnp_parameters.read_parameter_file(path, ext, proto)
    register_loaded(entries, api)
    if ext == ".h5" and needs_proto:
        proto.MergeFrom(_nnp_parameters.proto_with_parameters(OrderedDict(
            (key, Variable.from_numpy_array(values, need_grad=need_grad))
            for key, values, need_grad in entries)))
    return proto


def _unsupported_extension(ext, api):
    return ValueError(f"{api}: argument 'path' has an unsupported file extension {ext!r}; "
                      "expected one of .h5, .protobuf, .nntxt, .prototxt, .nnp")


def _empty_proto():
    from .utils import nnabla_pb2

    return nnabla_pb2.NNablaProtoBuf()


def register_loaded(entries, api):
    """Create or overwrite the parameters ``entries`` (``(name, values, need_grad)``, as
    the parameter file readers return them) in the current scope; every shape is checked
    against existing parameters before anything changes (ValueError naming ``api``)."""
    _check_loaded_shapes(entries, api)
    for key, values, need_grad in entries:
        var = get_parameter_or_create(key, values.shape, need_grad=need_grad)
        var.data.cast(values.dtype)[...] = values


def _check_loaded_shapes(entries, api):
    for key, values, need_grad in entries:
        existing = get_parameter(key)
        if existing is not None and tuple(existing.shape) != values.shape:
            raise ValueError(
                f"{api}: parameter '{key}' in the file has shape {values.shape}; the existing "
                f"parameter has shape {tuple(existing.shape)}")


def save_parameters(path, params=None, extension=None):
    """Saves parameters to a file, atomically.

    Formats, by the extension of ``path`` (or ``extension`` for a file object): ``.h5``
    (one dataset per parameter at its '/'-joined name, with attributes ``need_grad`` and
    ``index``), ``.protobuf`` (an ``NNablaProtoBuf`` with one ``parameter`` entry each,
    float32 values), ``.nntxt``/``.prototxt`` (the same in protobuf text) and ``.nnp`` (an
    archive with ``nnp_version.txt`` and ``parameter.h5``). nnabla 1.39 writes only
    ``.h5`` and ``.protobuf``; the other two are read back by it. A path target is written
    to a temporary file in the same folder and renamed over ``path`` only when complete.

    Args:
        path (str, os.PathLike or file object): Destination.
        params (dict, optional): ``{name: Variable}``; all parameters under the current
            scope (including ``need_grad=False`` ones) when None.
        extension (str, optional): Format of a file-object ``path`` (e.g. ``'.h5'``).

    Raises:
        TypeError: ``params`` is not a dict of Variables.
        ValueError: For an unknown extension or parameter names that collide.
    """
    api = "nn.save_parameters"
    ext = _files.file_extension(path, extension, api)
    if params is None:
        params = get_parameters(grad_only=False)
    elif not hasattr(params, "items") or not all(
            isinstance(k, str) and isinstance(v, Variable) for k, v in params.items()):
        raise TypeError(f"{api}: argument 'params' is of type {type(params).__name__}; "
                        "expected a dict of name (str) -> nnabla.Variable, or None")
    if ext == ".h5":
        _files.h5_parameters.write_parameter_file(path, params)
    else:
        from .utils import _nnp_parameters

        if ext not in _nnp_parameters.PARAMETER_EXTENSIONS:
            raise _unsupported_extension(ext, api)
        _nnp_parameters.write_parameter_file(path, params, ext)
    if hasattr(path, "seek"):
        path.seek(0)        # nnabla rewinds a file object, so it can be read back at once
