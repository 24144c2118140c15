"""Process-wide function and solver hooks (``nn.set_function_pre_hook`` and friends).

Hooks registered here run in every graph ``forward``/``backward`` (function hooks: called
with the function) and around each parameter of every solver operation (``update``,
``weight_decay``, ``clip_grad_by_norm``, ``scale_grad``, the inf/NaN checks; solver hooks:
called with no argument), as nnabla's global callbacks do: global pre hooks run before the
hook given to the call, global post hooks after it, each group in order of registration.
Setting a key again replaces that hook in place.

Example:
    >>> import nnabla as nn, nnabla.functions as F
    >>> names = []
    >>> nn.set_function_pre_hook("names", lambda f: names.append(f.info.type_name))
    >>> x = nn.Variable((2,))
    >>> F.relu(F.sigmoid(x)).forward()
    >>> nn.unset_function_pre_hook("names")
    >>> names
    ['Sigmoid', 'ReLU']
"""
from __future__ import annotations

__all__ = ["set_function_pre_hook", "set_function_post_hook", "unset_function_pre_hook",
           "unset_function_post_hook", "set_solver_pre_hook", "set_solver_post_hook",
           "unset_solver_pre_hook", "unset_solver_post_hook"]

_HOOKS = {"function_pre": {}, "function_post": {}, "solver_pre": {}, "solver_post": {}}

# The parameter a solver operation is processing while global solver hooks run:
# ``(data, grad, state arrays...)`` as SyncedArrays, or None. The hooks take no argument
# (nnabla's signature); nnabla.lms reads this to know which arrays an update touches.
UPDATING = [None]


def _set(kind, api, key, hook):
    if not isinstance(key, str):
        raise TypeError(f"nnabla.{api}: argument 'key' must be a str; given {key!r}")
    if hook is None:        # nnabla ignores None
        return
    if not callable(hook):
        raise TypeError(f"nnabla.{api}: argument for key {key!r} must be callable; "
                        f"given {type(hook).__name__}")
    _HOOKS[kind][key] = hook


def _unset(kind, key):
    _HOOKS[kind].pop(key, None)


def set_function_pre_hook(key, function_pre_hook):
    """Call ``function_pre_hook(f)`` before every function of every forward and backward.

    Args:
        key (str): the hook's identifier (for :func:`unset_function_pre_hook`).
        function_pre_hook (callable): takes the function; None is ignored.
    """
    _set("function_pre", "set_function_pre_hook", key, function_pre_hook)


def set_function_post_hook(key, function_post_hook):
    """Call ``function_post_hook(f)`` after every function of every forward and backward.

    Args:
        key (str): the hook's identifier (for :func:`unset_function_post_hook`).
        function_post_hook (callable): takes the function; None is ignored.
    """
    _set("function_post", "set_function_post_hook", key, function_post_hook)


def unset_function_pre_hook(key):
    """Remove the global function pre hook registered as ``key`` (no error if absent)."""
    _unset("function_pre", key)


def unset_function_post_hook(key):
    """Remove the global function post hook registered as ``key`` (no error if absent)."""
    _unset("function_post", key)


def set_solver_pre_hook(key, solver_pre_hook):
    """Call ``solver_pre_hook()`` before each parameter of every solver operation.

    Args:
        key (str): the hook's identifier (for :func:`unset_solver_pre_hook`).
        solver_pre_hook (callable): takes no argument; None is ignored.
    """
    _set("solver_pre", "set_solver_pre_hook", key, solver_pre_hook)


def set_solver_post_hook(key, solver_post_hook):
    """Call ``solver_post_hook()`` after each parameter of every solver operation.

    Args:
        key (str): the hook's identifier (for :func:`unset_solver_post_hook`).
        solver_post_hook (callable): takes no argument; None is ignored.
    """
    _set("solver_post", "set_solver_post_hook", key, solver_post_hook)


def unset_solver_pre_hook(key):
    """Remove the global solver pre hook registered as ``key`` (no error if absent)."""
    _unset("solver_pre", key)


def unset_solver_post_hook(key):
    """Remove the global solver post hook registered as ``key`` (no error if absent)."""
    _unset("solver_post", key)


def _chain(first, second):
    hooks = [h for h in first + second if h is not None]
    if not hooks:
        return None
    if len(hooks) == 1:
        return hooks[0]

    def run(*args):
        for hook in hooks:
            hook(*args)
    return run


def function_hooks(pre_hook, post_hook):
    """``(pre, post)`` for one pass: the global hooks around the call's own (engine use)."""
    pre, post = _HOOKS["function_pre"], _HOOKS["function_post"]
    if not pre and not post:
        return pre_hook, post_hook
    return (_chain(list(pre.values()), [pre_hook]), _chain([post_hook], list(post.values())))


def solver_hooks(pre_hook, post_hook):
    """``(pre, post, active)`` for one solver operation; ``active``: global hooks are set
    (the solver then publishes the parameter it processes in :data:`UPDATING`)."""
    pre, post = _HOOKS["solver_pre"], _HOOKS["solver_post"]
    if not pre and not post:
        return pre_hook, post_hook, False
    return (_chain(list(pre.values()), [pre_hook]), _chain([post_hook], list(post.values())),
            True)
