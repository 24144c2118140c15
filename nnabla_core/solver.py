"""The solver interface: parameter and state bookkeeping around a backend's update rule.

The core holds no update math. A solver looks up its rule through the plugin registry
(``nnabla.plugins.solver_rule``) for the context it is created in; the rule object
has ``update(xp, p, g, state, t, hp)``, ``states``, ``optional_states``, ``xp`` and
``grad_ops`` (see ``nnabla_ext.cpu.solvers`` for the contract).
"""
from __future__ import annotations

import functools
import inspect
import numbers
import os
import textwrap
from collections import OrderedDict

import numpy as np

from . import _solver_states, callback
from ._array import SyncedArray
from ._spec.solvers import SPECS
from .context import get_current_context
from .plugins.resolve import solver_binding

STEP_LIMIT = 2**32 - 2  # nnabla's uint32 step counter saturates here


# -- argument checks of the solver methods (the constructors' are _check_arguments) --------
def _real(api, arg, value):
    """``value`` as a float32, or TypeError naming ``api`` and ``arg`` (a number is needed;
    a list, an array of several values or None would be broadcast or fail later)."""
    if value.__class__ is float:        # the common case, nothing to check
        return np.float32(value)
    from ._spec.args import check_value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return np.float32(check_value(api, arg, "float", value))


def _check_hooks(api, **hooks):
    """Each hook is None or a callable; checked before any parameter is touched."""
    for arg, hook in hooks.items():
        if hook is not None and not callable(hook):
            raise TypeError(f"{api}: argument '{arg}' is of type {type(hook).__name__}; "
                            "expected a callable taking no argument, or None")


def _path(api, arg, path):
    """``path`` as a str, or TypeError naming ``api`` and ``arg``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{api}: argument '{arg}' is of type {type(path).__name__}; "
                        "expected a file path (str or os.PathLike)")
    return os.fspath(path)


class SolverState:
    """The state of one parameter: the step count ``t`` and ``pstate`` (name -> Variable)."""

    def __init__(self):
        self.pstate = {}
        self.t = 0

    def __repr__(self):
        return f"SolverState(t={self.t}, pstate={sorted(self.pstate)})"


def _find_rule(type_name, ctx):
    """``(rule, family)`` of solver ``type_name`` for context ``ctx``.

    Raises:
        NotImplementedError: no installed backend of ``ctx`` has the rule.
    """
    return solver_binding(type_name, ctx)


def _current_context():
    return get_current_context()


def _grad_is_zeroing(grad):
    """True when ``grad`` (a SyncedArray) was zeroed lazily and never computed since (nnabla
    skips such parameters)."""
    return grad.fill_value == 0 and not grad.heads


_F32 = np.dtype(np.float32)


def _f32(synced, family):
    """The float32 buffer of a SyncedArray in the rule's family, for writing (as
    NdArray.cast)."""
    if synced.__class__ is SyncedArray and synced.dtype is _F32:
        heads = synced.heads
        if len(heads) == 1:
            head = heads.get((family, _F32))
            if head is not None:        # already the only head: cast's bookkeeping only
                synced.modification_count += 1
                synced.clear_called = False
                synced.fill_value = None
                return head
    if synced.dtype is not _F32:
        synced.dtype = _F32
    return synced.cast(_F32, family)


class Solver:
    """Updates registered parameters from their gradients with one update rule.

    Solvers are created by the functions of :mod:`nnabla.solvers` (``S.Adam()``);
    this class is their common interface.

    Example:
        >>> import numpy as np
        >>> import nnabla as nn
        >>> import nnabla.solvers as S
        >>> w = nn.Variable.from_numpy_array(np.ones(3, np.float32), need_grad=True)
        >>> solver = S.Sgd(lr=0.5)
        >>> solver.set_parameters({"w": w})
        >>> w.g = np.full(3, 2.0)
        >>> solver.update()
        >>> w.d.tolist()
        [0.0, 0.0, 0.0]
    """

    def __init__(self, type_name, hyper_params, *, lr_name, fused_weight_decay=False,
                 default_weight_decay=0.0, info=None, ctx=None):
        self._name = type_name
        self.info = dict(hyper_params if info is None else info)
        self._hp = {k: v if isinstance(v, bool) else np.float32(v)
                    for k, v in hyper_params.items()}
        self._lr_name = lr_name
        self._init_lr = self._hp[lr_name]
        self._fused = bool(fused_weight_decay)
        self._default_wd = self._wd = np.float32(default_weight_decay)
        self._rule, self._family = _find_rule(type_name,
                                              _current_context() if ctx is None else ctx)
        self._params = OrderedDict()
        self._states = OrderedDict()

    # -- identity and hyper-parameters ------------------------------------------------------
    @property
    def name(self):
        """The solver type name, e.g. ``'Adam'``."""
        return self._name

    def learning_rate(self):
        """The current learning rate (stored as float32, returned as a Python float)."""
        return float(self._hp[self._lr_name])

    def set_learning_rate(self, learning_rate):
        """Set the learning rate (``alpha``, ``lr`` or ``eta`` depending on the solver)."""
        self._hp[self._lr_name] = _real("Solver.set_learning_rate", "learning_rate",
                                        learning_rate)

    def weight_decay_is_fused(self):
        """True when :meth:`weight_decay` only records a rate that the next update applies."""
        return self._fused

    def setup(self, params):
        """Deprecated; call :meth:`set_parameters`."""
        raise RuntimeError("Deprecated. Call set_parameters(param_dict).")

    # -- parameters ---------------------------------------------------------------------------
    def set_parameters(self, param_dict, reset=True, retain_state=False):
        """Register parameters to update.

        Args:
            param_dict (dict): key (str) -> parameter ``Variable``.
            reset (bool): clear all registered parameters first. Otherwise parameters are
                added, and an existing key gets the new Variable.
            retain_state (bool): with ``reset=False``, keep the state of an existing key
                (the shapes must match); otherwise its state starts afresh.

        Raises:
            TypeError: ``param_dict`` is not a dict (a list of Variables, ...), a key is not
                a str or a value is not a Variable.
            ValueError: ``retain_state`` with a parameter of another shape.
        """
        if not hasattr(param_dict, "items"):
            raise TypeError(f"Solver.set_parameters: argument 'param_dict' is of type "
                            f"{type(param_dict).__name__}; expected a dict of name -> "
                            "nnabla.Variable (e.g. nn.get_parameters())")
        items = list(param_dict.items())
        for key, var in items:
            if not isinstance(key, str):
                raise TypeError(f"Solver.set_parameters: argument 'param_dict': key {key!r} is "
                                f"of type {type(key).__name__}; expected str")
            if not (hasattr(var, "grad") and hasattr(var, "shape")):
                raise TypeError(f"Solver.set_parameters: argument 'param_dict': parameter "
                                f"'{key}' is of type {type(var).__name__}; expected "
                                "nnabla.Variable")
        if reset:
            self.clear_parameters()
        for key, var in items:
            old = self._params.get(key)
            if old is not None and retain_state:
                if tuple(old.shape) != tuple(var.shape):
                    raise ValueError(
                        f"Solver.set_parameters: could not retain the state of '{key}': shape "
                        f"{tuple(var.shape)} given, {tuple(old.shape)} registered")
            else:
                self._states[key] = self._new_state(var.shape)
            self._params[key] = var

    def remove_parameters(self, keys):
        """Unregister the parameters ``keys`` (a list of str) and their states."""
        keys = [keys] if isinstance(keys, str) else keys
        if not isinstance(keys, (list, tuple, set, frozenset, type({}.keys()))) or not all(
                isinstance(k, str) for k in keys):
            raise TypeError(f"Solver.remove_parameters: argument 'keys' is {keys!r}; expected "
                            "a list of parameter names (str)")
        for key in keys:
            self._params.pop(key, None)
            self._states.pop(key, None)

    def clear_parameters(self):
        """Unregister all parameters and states."""
        self._params.clear()
        self._states.clear()

    def get_parameters(self):
        """Return an OrderedDict key -> registered parameter Variable."""
        return OrderedDict(self._params)

    def _state_names(self):
        rule = self._rule
        return tuple(rule.states) + tuple(s for s, flag in rule.optional_states if self._hp[flag])

    def _new_state(self, shape):
        import nnabla as nn
        state = SolverState()
        for name in self._state_names():
            var = nn.Variable(shape)
            var.data.zero()
            state.pstate[name] = var
        return state

    # -- states -------------------------------------------------------------------------------
    def get_states(self):
        """Return an OrderedDict key -> SolverState; its Variables are the solver's own."""
        states = OrderedDict()
        for key, state in self._states.items():
            copy = states[key] = SolverState()
            copy.pstate, copy.t = dict(state.pstate), state.t
        return states

    def _check_state(self, key, shapes):
        """Raise ValueError unless ``shapes`` (name -> shape) fit parameter ``key``."""
        api = "Solver.set_states"
        if key not in self._params:
            raise ValueError(f"{api}: no parameter '{key}'; call set_parameters first "
                             f"(registered: {list(self._params)})")
        expected = self._state_names()
        if sorted(shapes) != sorted(expected):
            raise ValueError(f"{api}: state of '{key}' has {sorted(shapes)}; {self._name} "
                             f"expects {sorted(expected)}")
        shape = tuple(self._params[key].shape)
        for name, given in shapes.items():
            if tuple(given) != shape:
                raise ValueError(f"{api}: state '{key}/{name}' has shape {tuple(given)}; "
                                 f"expected {shape}, the shape of the parameter")

    def set_states(self, states):
        """Replace the states of registered parameters (the Variables are shared, not copied).

        Args:
            states (dict): key -> SolverState, as :meth:`get_states` returns.

        Raises:
            TypeError: ``states`` is not a dict of SolverState.
            ValueError: a key is not registered, or a state's names or shapes do not fit.
        """
        if not hasattr(states, "items") or not all(
                isinstance(s, SolverState) for s in states.values()):
            raise TypeError(f"Solver.set_states: argument 'states' is of type "
                            f"{type(states).__name__}; expected a dict of name -> "
                            "SolverState (as get_states returns)")
        for key, state in states.items():
            self._check_state(key, {n: v.shape for n, v in state.pstate.items()})
            if not 0 <= int(state.t) <= _solver_states.T_LIMIT:
                raise ValueError(f"Solver.set_states: step count of '{key}' is {state.t}")
        for key, state in states.items():
            new = self._states[key] = SolverState()
            new.pstate, new.t = dict(state.pstate), int(state.t)

    @staticmethod
    def _make_state(t, arrays):
        import nnabla as nn
        state = SolverState()
        state.t = int(t)
        state.pstate = {n: nn.Variable.from_numpy_array(a.astype(np.float32))
                        for n, a in arrays.items()}
        return state

    def save_states(self, path):
        """Save the states to ``path`` (``.h5``, or ``.protobuf``), atomically.

        Raises:
            TypeError: ``path`` is not a path.
            ValueError: another extension.
        """
        path = _path("Solver.save_states", "path", path)
        ext = os.path.splitext(path)[1]
        if ext == ".h5":
            _solver_states.save_h5(path, self._states)
        elif ext == ".protobuf":
            _solver_states.save_protobuf(path, self._states)
        else:
            raise ValueError(f"Solver.save_states: argument 'path' has extension {ext!r}; "
                             "expected '.h5' or '.protobuf'")

    def load_states(self, path):
        """Load states saved by :meth:`save_states` (or by nnabla) for the registered keys.

        Raises:
            FileNotFoundError: no file at ``path``.
            TypeError: ``path`` is not a path.
            ValueError: unsupported extension, corrupt file, or states that do not fit.
        """
        path = _path("Solver.load_states", "path", path)
        ext = os.path.splitext(path)[1]
        if ext == ".h5":
            states = _solver_states.load_h5(path, self._check_state, self._make_state)
        elif ext in (".protobuf", ".nntxt", ".prototxt"):
            states = _solver_states.load_protobuf(path, self._make_state, ext != ".protobuf")
        else:
            raise ValueError(f"Solver.load_states: argument 'path' has extension {ext!r}; "
                             "expected '.h5', '.protobuf', '.nntxt' or '.prototxt'")
        self.set_states(states)

    def set_states_to_protobuf(self, optimizer):
        """Write the states into ``optimizer.solver.states`` (an nnabla Optimizer message)."""
        _solver_states.states_to_protobuf(optimizer, self._states)

    def set_states_from_protobuf(self, optimizer_proto):
        """Set the states from ``optimizer_proto.solver.states``."""
        self.set_states(_solver_states.states_from_protobuf(optimizer_proto, self._make_state))

    # -- per-parameter operations ---------------------------------------------------------
    def _each_with_grad(self, pre_hook, post_hook):
        """``(key, data, grad)`` (SyncedArrays) of the parameters whose gradient was
        computed, between hooks (the global solver hooks of :mod:`nnabla.callback` too):
        a list when there is no hook (the common case), else a generator."""
        pre_hook, post_hook, publish = callback.solver_hooks(pre_hook, post_hook)
        if pre_hook is None and post_hook is None and not publish:
            computed = []
            for key, var in self._params.items():
                node = var._node
                grad = node.grad
                if grad.heads or grad.fill_value != 0:
                    computed.append((key, node.data, grad))
            return computed
        return self._each_with_hooks(pre_hook, post_hook, publish)

    def _each_with_hooks(self, pre_hook, post_hook, publish):
        try:
            for key, var in list(self._params.items()):
                node = var._node
                grad = node.grad
                if _grad_is_zeroing(grad):
                    continue
                if publish:
                    states = self._states.get(key)
                    callback.UPDATING[0] = (node.data, grad) + tuple(
                        v._node.data for v in (states.pstate.values() if states else ()))
                if pre_hook is not None:
                    pre_hook()
                yield key, node.data, grad
                if post_hook is not None:
                    post_hook()
        finally:
            callback.UPDATING[0] = None

    def zero_grad(self):
        """Set the gradients of all registered parameters to zero (lazily)."""
        for var in self._params.values():
            var._node.grad.fill(0)

    def update(self, update_pre_hook=None, update_post_hook=None):
        """Update every parameter whose gradient was computed, from ``p.g`` into ``p.d``.

        Parameters whose gradient was only zeroed (``zero_grad``) since are skipped, as in
        nnabla. A fused weight-decay rate set by :meth:`weight_decay` applies to this
        update only; the rate then returns to the solver's default.

        Args:
            update_pre_hook (callable): called with no argument before each parameter.
            update_post_hook (callable): called with no argument after each parameter.
        """
        _check_hooks("Solver.update", update_pre_hook=update_pre_hook,
                     update_post_hook=update_post_hook)
        rule, fam = self._rule, self._family
        hp = dict(self._hp, weight_decay_rate=self._wd, init_lr=self._init_lr)
        update, xp, states = rule.update, fam.xp, self._states
        try:
            for key, data, grad in self._each_with_grad(update_pre_hook, update_post_hook):
                state = states[key]
                t = state.t + 1
                state.t = t = t if t < STEP_LIMIT else STEP_LIMIT
                pstate = state.pstate
                arrays = {name: _f32(v._node.data, fam) for name, v in pstate.items()} \
                    if pstate else {}
                update(xp, _f32(data, fam), _f32(grad, fam), arrays, t, hp)
        finally:
            self._wd = self._default_wd

    def weight_decay(self, decay_rate, pre_hook=None, post_hook=None):
        """Apply weight decay of rate ``decay_rate``.

        Non-fused solvers add ``decay_rate * p.d`` to ``p.g`` now. Fused ones
        (:meth:`weight_decay_is_fused`) record the rate for the next :meth:`update`.
        """
        decay_rate = _real("Solver.weight_decay", "decay_rate", decay_rate)
        _check_hooks("Solver.weight_decay", pre_hook=pre_hook, post_hook=post_hook)
        if self._fused:
            self._wd = decay_rate
            return
        if decay_rate == 0:
            return
        decay, fam = self._rule.grad_ops.weight_decay, self._family
        xp = fam.xp
        for _, data, grad in self._each_with_grad(pre_hook, post_hook):
            decay(xp, _f32(data, fam), _f32(grad, fam), decay_rate)

    def clip_grad_by_norm(self, clip_norm, pre_hook=None, post_hook=None):
        """Scale each gradient whose L2 norm exceeds ``clip_norm`` down to that norm."""
        clip_norm = _real("Solver.clip_grad_by_norm", "clip_norm", clip_norm)
        _check_hooks("Solver.clip_grad_by_norm", pre_hook=pre_hook, post_hook=post_hook)
        if clip_norm == 0:
            return
        ops, fam = self._rule.grad_ops, self._family
        for _, _, grad in self._each_with_grad(pre_hook, post_hook):
            ops.clip_grad_by_norm(fam.xp, _f32(grad, fam), clip_norm)

    def scale_grad(self, scale, pre_hook=None, post_hook=None):
        """Multiply every gradient by ``scale`` (mixed-precision loss scaling)."""
        scale = _real("Solver.scale_grad", "scale", scale)
        _check_hooks("Solver.scale_grad", pre_hook=pre_hook, post_hook=post_hook)
        ops, fam = self._rule.grad_ops, self._family
        for _, _, grad in self._each_with_grad(pre_hook, post_hook):
            ops.scale_grad(fam.xp, _f32(grad, fam), scale)

    def _any_grad(self, check_name, pre_hook, post_hook):
        _check_hooks(f"Solver.check_{check_name[4:]}_grad", pre_hook=pre_hook,
                     post_hook=post_hook)
        check, fam = getattr(self._rule.grad_ops, check_name), self._family
        for _, _, grad in self._each_with_grad(pre_hook, post_hook):
            if check(fam.xp, grad.get(_F32, fam)):
                return True
        return False

    def check_inf_grad(self, pre_hook=None, post_hook=None):
        """Return True if any gradient holds an infinity."""
        return self._any_grad("has_inf", pre_hook, post_hook)

    def check_nan_grad(self, pre_hook=None, post_hook=None):
        """Return True if any gradient holds a NaN."""
        return self._any_grad("has_nan", pre_hook, post_hook)

    def check_inf_or_nan_grad(self, pre_hook=None, post_hook=None):
        """Return True if any gradient holds an infinity or a NaN."""
        return self._any_grad("has_inf_or_nan", pre_hook, post_hook)

    def __repr__(self):
        return f"<Solver {self._name} with {len(self._params)} parameters>"


def solver_api(func):
    """Decorate ``func(ctx, ...)`` into ``f(...)`` that passes the current context first.

    Args:
        func (callable): its first argument must be named ``ctx``.

    Returns:
        callable: with ``func``'s signature minus ``ctx``.
    """
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    if not params or params[0].name != "ctx":
        raise ValueError(f"solver_api: the first argument of {func.__name__} must be 'ctx'")

    @functools.wraps(func)
    def with_context(*args, **kwargs):
        return func(_current_context(), *args, **kwargs)

    with_context.__signature__ = sig.replace(parameters=params[1:])
    with_context.__solver_api_base__ = func
    return with_context


# -- the solvers: S.<name>(**args) with nnabla's signatures, built from the spec table ----
def _solver_doc(name, spec):
    rule = textwrap.fill(spec.doc, 88, initial_indent="    ", subsequent_indent="    ")
    args = "\n".join(f"        {arg} ({type(default).__name__}): default {default!r}."
                     for arg, default in spec.args)
    if spec.fused is True:
        rule += "\n\n    Weight decay is fused into the update (see Solver.weight_decay)."
    elif spec.fused:
        rule += f"\n\n    Weight decay is fused into the update when ``{spec.fused}`` is True."
    return (f"Create the {name} solver in the current context.\n\n{rule}\n\n"
            f"    Args:\n{args}\n\n    Returns:\n        ~nnabla.solver.Solver: the solver.\n")


def _check_arguments(name, spec, values):
    for arg, default in spec.args:
        value = values[arg]
        expected = bool if isinstance(default, bool) else numbers.Real
        if not isinstance(value, expected) and not (expected is bool and value in (0, 1)):
            raise TypeError(f"S.{name}: argument '{arg}' is of type {type(value).__name__}; "
                            f"expected {'bool' if expected is bool else 'a real number'}")


def _make_solver_function(name, spec):
    """Build ``S.<name>(**args)`` with nnabla's signature from ``spec``."""
    signature = inspect.Signature([
        inspect.Parameter(arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        for arg, default in spec.args])

    def create(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        _check_arguments(name, spec, values)
        fused = values[spec.fused] if isinstance(spec.fused, str) else spec.fused
        return Solver(name, values, lr_name=spec.lr, fused_weight_decay=bool(fused),
                      default_weight_decay=values[spec.wd] if spec.wd else 0.0)

    create.__name__ = create.__qualname__ = name
    create.__module__ = "nnabla.solvers"
    create.__signature__ = signature
    create.__doc__ = _solver_doc(name, spec)
    return create


# nnabla defines its solvers in nnabla.solver and re-exports them from nnabla.solvers
SOLVER_FUNCTIONS = {name: _make_solver_function(name, spec) for name, spec in SPECS.items()}
globals().update(SOLVER_FUNCTIONS)
