"""The calls of the bad-input sweep (``test_bad_input_sweep.py``), shared with the tool that
records nnabla 1.39's answer to each (``tools/record_bad_input_sweep.py``).

An entry point starts from a working call; each mistake replaces one argument. A call is a
:class:`Call`: its key (``"F.affine weight=None"``), the module (``F``, ``PF``, ``S``) and
name of the function, positional and keyword arguments, and the expectation before nnabla's
answer is known: ``RAISE`` or ``EITHER`` (see the test module's docstring).
"""
from __future__ import annotations

import inspect
import signal
import time
import traceback
from typing import NamedTuple

import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla._spec import BY_SNAKE
from nnabla.testing.function_cases import ALL_CASES

RAISE, EITHER = "raise", "either"
MODULES = {"F": F, "PF": PF, "S": S}
# Mistakes we refuse even where nnabla 1.39 takes them silently: it truncates a fractional
# float to an int, iterates a dict's keys, takes a str's truth value for a bool, and makes
# variables of negative size.
STRICT = ("a fractional float", "fractional floats", "a dict", "a nested tuple",
          "a str for a bool", "a negative count", "negative counts")


class Call(NamedTuple):
    key: str            # "<api> <argument>=<mistake>" ("<api>" alone for the working call)
    api: str            # "F.affine"
    argument: str | None
    module: str
    name: str
    args: tuple
    kwargs: dict
    expect: str

    def function(self):
        return getattr(MODULES[self.module], self.name)

    def __call__(self):
        return self.function()(*self.args, **self.kwargs)


# --- judging a call ---------------------------------------------------------------------

ALLOWED = (TypeError, ValueError, RuntimeError)
# Errors that say the code tripped over the input instead of checking it.
INTERNAL = (AttributeError, IndexError, KeyError, ZeroDivisionError, OverflowError,
            AssertionError, SystemError, RecursionError)
INTERNAL_MESSAGES = ("'NoneType' object", "NoneType' object", "object is not subscriptable",
                     "object is not iterable", "has no len()", "unsupported operand type",
                     "not supported between instances", "object cannot be interpreted")
SECONDS_PER_ENTRY_POINT = 20


class _Hang(Exception):
    pass


def watchdog():
    """Fail (instead of hanging the suite) when an entry point takes too long; an alarm
    set by someone else (pytest-timeout) is set again afterwards."""
    def alarm(signum, frame):
        raise _Hang("timed out")
    previous = signal.signal(signal.SIGALRM, alarm)
    outer = signal.alarm(SECONDS_PER_ENTRY_POINT)
    start = time.monotonic()
    nn.clear_parameters()
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
    if outer:
        signal.alarm(max(1, int(outer - (time.monotonic() - start))))
    nn.clear_parameters()


def _state():
    """What a failed call must leave as it was."""
    from nnabla import parameter
    from nnabla._state import STATE
    params = nn.get_parameters(grad_only=False)
    return ({k: (id(v), v.shape, v.need_grad) for k, v in params.items()},
            parameter.get_current_parameter_scope(), repr(nn.get_current_context()),
            repr(STATE.default_context), len(STATE.context_stack), nn.get_auto_forward())


def _variables(result):
    if isinstance(result, nn.Variable):
        return [result]
    if isinstance(result, (list, tuple)):
        return [v for r in result for v in _variables(r)]
    return []


def _run(result):
    """Run the graph a call built (the forward pass of what it returned)."""
    outputs = _variables(result)
    if outputs:
        nn.forward_all(outputs) if len(outputs) > 1 else outputs[0].forward()


INCONSISTENT = ("one value more", "one value less", "negative values", "-1")


def judge(api, argument, call, expect, accepts=None, names=(), argument_label=None,
          state=None, allowed=()):
    """None if ``call`` behaves (see test_bad_input_sweep's docstring), else why not.

    ``accepts`` (optional) checks an accepted result and returns a problem or None;
    ``state`` (optional) returns more state a failed call must leave as it was; ``allowed``
    more exception classes that are a right answer (FileNotFoundError for a missing file).
    """
    nn.clear_parameters()           # each call starts afresh (parametric functions)
    before = _state(), state() if state else None
    try:
        result = call()
        _run(result)
    except _Hang:
        raise
    except INTERNAL as e:
        return f"internal {type(e).__name__}: {e}\n{_where(e)}"
    except ALLOWED + tuple(allowed) as e:
        message = str(e)
        problems = []
        if any(m in message for m in INTERNAL_MESSAGES):
            problems.append("an internal message")
        if _raised_in_numpy(e):
            problems.append("raised inside numpy")
        if api not in message and api.split(".")[-1] + ":" not in message:
            problems.append(f"does not name {api}")
        if argument is not None and not any(a in message for a in _names(argument)):
            # A size inconsistent with the inputs may be reported as another argument's
            # shape mismatch.
            label = argument_label or ""
            if not (label in INCONSISTENT or expect == EITHER) or not any(
                    f"'{n}'" in message for n in names):
                problems.append(f"does not name the argument {argument!r}")
        if (_state(), state() if state else None) != before:
            problems.append("changed state")
        if problems:
            return f"{', '.join(problems)}: {type(e).__name__}: {message[:300]}\n{_where(e)}"
        return None
    except Exception as e:          # anything else is a wrong kind of error
        return f"unexpected {type(e).__name__}: {e}\n{_where(e)}"
    if expect == RAISE:
        return f"accepted ({_short(result)})"
    return accepts(result) if accepts is not None else None


def _names(argument):
    """The ways a message may name an argument (``x[1]`` is element 1 of a variadic x)."""
    base = argument.split("[")[0]
    return (f"'{argument}'", f"'{base}'", f"{base}=", f"'{base}[")


def _raised_in_numpy(error):
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and "/numpy/" in frames[-1].filename


def _where(error):
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    return " <- ".join(f"{f.filename.rsplit('/', 2)[-1]}:{f.lineno}" for f in reversed(frames))


def _short(value):
    text = repr(value)
    return text if len(text) < 80 else text[:77] + "..."


def report(failures):
    assert not failures, "\n".join(f"- {what}: {why}" for what, why in failures)



# --- mistakes, by what the argument is (label, bad value, expectation) ----------------------

def variable_mistakes(v, optional=False):
    """A Variable input: None, a list holding it, its numpy data, a str."""
    out = [("a list", [v], RAISE), ("a numpy array", np.ones(v.shape, np.float32), RAISE),
           ("a str", "x", RAISE)]
    if not optional:
        out.insert(0, ("None", None, RAISE))
    return out


def int_mistakes(value, allows_none=False, count=False):
    listed = [value if isinstance(value, int) else 1]
    out = [("a str", "1", RAISE), ("a fractional float", 1.5, RAISE), ("a list", listed, RAISE)]
    if not allows_none:
        out.append(("None", None, RAISE))
    out.append(("a negative count", -1, RAISE) if count else ("-1", -1, EITHER))
    if isinstance(value, int) and not isinstance(value, bool):
        out.append(("an integral float", float(value), EITHER))
    return out


def float_mistakes(allows_none=False):
    out = [("a str", "0.5", RAISE), ("a list", [0.5], RAISE)]
    if not allows_none:
        out.append(("None", None, RAISE))
    return out


def ints_mistakes(value, allows_none=False, counts=False):
    value = tuple(value) if value is not None and len(value) else (1,)
    n = len(value)
    out = [("a str", "ab", RAISE), ("fractional floats", (1.5,) * n, RAISE),
           ("a nested tuple", ((1,),) * n, RAISE), ("a dict", {0: 1}, RAISE),
           ("one value more", value + (value[-1],), EITHER),
           ("one value less", value[:-1], EITHER),
           ("negative counts", (-1,) * n, RAISE) if counts else ("negative values", (-1,) * n,
                                                                 EITHER)]
    if not allows_none:
        out.append(("None", None, RAISE))
    if all(isinstance(v, int) for v in value):
        out.append(("integral floats", tuple(float(v) for v in value), EITHER))
    return out


def bool_mistakes():
    return [("a str for a bool", "yes", RAISE), ("a list", [True], RAISE)]


def str_mistakes(allows_none=False):
    out = [("an int", 1, RAISE), ("a list", ["a"], RAISE)]
    if not allows_none:
        out.append(("None", None, RAISE))
    return out


def mistakes_for_value(value, allows_none, count=False):
    """Mistakes chosen from a working value's type."""
    if isinstance(value, bool):
        return bool_mistakes()
    if isinstance(value, (int, np.integer)):
        return int_mistakes(int(value), allows_none, count)
    if isinstance(value, (float, np.floating)):
        return float_mistakes(allows_none)
    if isinstance(value, str):
        return str_mistakes(allows_none)
    if isinstance(value, (tuple, list)) and value and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        return ints_mistakes(tuple(int(v) for v in value), allows_none, count)
    if isinstance(value, (nn.Variable, nn.NdArray)):
        return variable_mistakes(value, optional=allows_none)
    return []


def _mutations(api, module, name, args, kwargs, arg_names, mistakes_of):
    """The working call, then one call per (argument, mistake): ``args`` positional values
    named ``arg_names``; ``mistakes_of(name, value)`` lists an argument's mistakes."""
    calls = [Call(api, api, None, module, name, tuple(args), dict(kwargs), EITHER)]
    for k, (arg, value) in enumerate(zip(arg_names, args)):
        for label, bad, expect in mistakes_of(arg, value):
            changed = list(args)
            changed[k] = bad
            calls.append(Call(f"{api} {arg}={label}", api, arg, module, name, tuple(changed),
                              dict(kwargs), expect))
    for arg, value in kwargs.items():
        for label, bad, expect in mistakes_of(arg, value):
            calls.append(Call(f"{api} {arg}={label}", api, arg, module, name, tuple(args),
                              {**kwargs, arg: bad}, expect))
    return calls


# --- nnabla.functions -------------------------------------------------------------------

# A case other than the first where the first one is not a call nnabla 1.39 takes too.
CASE_INDEX = {"Unique": 2}
# Variadic functions whose inputs must share a shape in nnabla 1.39 (the first case
# broadcasts): every input takes the first one's shape.
SAME_SHAPES = {"AddN", "MulN"}


def _first_cases():
    by_name = {}
    for case in ALL_CASES:
        by_name.setdefault(case.name, []).append(case)
    return {name: cases[CASE_INDEX.get(name, 0)] for name, cases in by_name.items()}


FIRST_CASES = _first_cases()
F_SPEC_NAMES = sorted(n for n in F.__all__ if n in BY_SNAKE and BY_SNAKE[n].name in FIRST_CASES)
# Public F members outside the spec table: input shapes and keyword arguments of a working call.
F_EXTRA = {
    "clip_by_norm": (((2, 3),), {"clip_norm": 1.0, "axis": 1}),
    "clip_by_value": (((2, 3),), {"min": -0.5, "max": 0.5}),
    "dot": (((2, 3), (3, 4)), {}),
}
F_NAMES = sorted(F_SPEC_NAMES + list(F_EXTRA))
# nnabla.functions members not swept, and why.
F_NOT_SWEPT = {
    "BatchNormalizationInOutAdapter": "a class (the axes adapter), not a function",
    "function_api": "a decorator", "get_auto_forward": "takes no argument",
    "get_current_context": "takes no argument",
    "multi_head_attention": "swept through PF.multi_head_attention, which makes its weights",
    "reduce": "deprecated (a DeprecationWarning), the same as F.sum / F.mean",
}


# Inputs the normalization functions take as None (nnabla: "None omits them").
NONE_OMITS = ("beta", "gamma", "mean", "variance")


def _variable(a, imperative=False):
    if a is None:
        return None
    a = np.array(a)
    if a.dtype == np.int64:         # nnabla 1.39's CPU kernels take int32 indices
        a = a.astype(np.int32)
    return (nn.NdArray if imperative else nn.Variable).from_numpy_array(a)


# Arguments left at their default and not spoiled: quantize_linear's dtype is a numpy type
# in nnabla's signature and a type code in its function table.
NOT_SPOILED = {"quantize_linear": ("dtype",), "dequantize_linear": ("dtype",)}


def _spec_arg_mistakes(arg, value):
    kind = arg.kind.rstrip("?")
    allows_none = arg.kind.endswith("?") or arg.default is None
    if kind == "int":
        return int_mistakes(value, allows_none)
    if kind == "float":
        return float_mistakes(allows_none)
    if kind == "bool":
        return bool_mistakes()
    if kind == "str":
        return str_mistakes(allows_none)
    if kind in ("ints", "optints"):
        if isinstance(value, (int, np.integer)):
            value = (int(value),)
        if value is None:
            value = (1,)
        if kind == "optints" and any(v is None for v in value):
            return [("a str", "ab", RAISE), ("fractional floats", (1.5,) * len(value), RAISE)]
        return ints_mistakes(tuple(value), allows_none)
    if kind == "floats":
        return [("a str", "ab", RAISE), ("a dict", {0: 1.0}, RAISE)] + (
            [] if allows_none else [("None", None, RAISE)])
    return []


def function_calls(snake, imperative=False):
    """The working call of ``F.<snake>`` and each of its mistakes; with ``imperative`` the
    inputs are NdArrays (the function runs at once) instead of Variables."""
    api = f"F.{snake}"
    if snake in F_EXTRA:
        shapes, kwargs = F_EXTRA[snake]
        inputs = [_variable(np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s),
                            imperative) for s in shapes]
        names = list(inspect.signature(getattr(F, snake)).parameters)[:len(inputs)]

        def mistakes(arg, value):
            return mistakes_for_value(value, allows_none=arg == "axis")
        return _mutations(api, "F", snake, inputs, kwargs, names, mistakes)
    spec = BY_SNAKE[snake]
    case = FIRST_CASES[spec.name]
    arrays = case.make_inputs()
    if spec.name in SAME_SHAPES:
        arrays = [[x[0] + k for k in range(len(x))] for x in arrays]
    inputs = [[_variable(a, imperative) for a in x] if isinstance(x, list)
              else _variable(x, imperative) for x in arrays]
    params = inspect.signature(getattr(F, snake)).parameters
    by_name = {a.name: a for a in spec.args}
    kwargs = {n: case.args.get(n, by_name[n].default) for n in params if n in by_name}
    kwargs = {n: v for n, v in kwargs.items() if (n in case.args or v is not None)
              and n not in NOT_SPOILED.get(snake, ())}
    if spec.variadic_input:
        kwargs = dict(case.args)
        inputs = inputs[0] + inputs[1:]
        names = [f"{spec.inputs[0].name}[{k}]" for k in range(len(inputs))]
        optional = {}
    else:
        names = [i.name for i in spec.inputs]
        optional = {i.name: i.optional for i in spec.inputs}
        # Adapters may order inputs and arguments differently: pass inputs by name then.
        if all(n in params for n in names) and list(params)[:len(names)] != names:
            kwargs = {**{n: v for n, v in zip(names, inputs) if v is not None}, **kwargs}
            inputs, names = [], []
        else:
            # or name them differently (gather_nd's data): positional, named as there.
            names = list(params)[:len(names)] if not all(n in params for n in names) \
                else names
            while inputs and inputs[-1] is None:
                inputs.pop()
                names.pop()

    def mistakes(arg, value):
        if arg in by_name:
            return _spec_arg_mistakes(by_name[arg], value)
        if value is None:
            return []
        return variable_mistakes(value, optional.get(arg.split("[")[0], False)
                                 or arg in NONE_OMITS)
    return _mutations(api, "F", snake, inputs, kwargs, names, mistakes)


# --- nnabla.parametric_functions --------------------------------------------------------

class V(tuple):
    """The shape of a Variable argument in PF_CALLS."""


def _v(*shape, integer=False):
    size = int(np.prod(shape))
    if integer:
        return nn.Variable.from_numpy_array((np.arange(size) % 3).reshape(shape).astype(np.int32))
    return nn.Variable.from_numpy_array(np.linspace(-1, 1, size, dtype=np.float32)
                                        .reshape(shape))


CONV = ((2, 3, 5, 5), {"outmaps": 2, "kernel": (3, 3)})
AFFINE = ((2, 3), {"n_outmaps": 4})
# PF layer -> (input shapes (or callables making inputs), keyword arguments of a working call)
PF_CALLS = {
    "affine": AFFINE, "batch_normalization": ((2, 3, 4, 4), {}),
    "binary_connect_affine": AFFINE, "binary_connect_convolution": CONV,
    "binary_weight_affine": AFFINE, "binary_weight_convolution": CONV,
    "convolution": CONV, "cpd3_convolution": ((2, 3, 5, 5), {"outmaps": 2, "kernel": (3, 3),
                                                             "r": 2, "max_iter": 2}),
    "deconvolution": CONV,
    "deformable_convolution": ((2, 3, 5, 5), {"outmaps": 2, "kernel": (3, 3),
                                              "offset": V((2, 18, 5, 5)), "pad": (1, 1)}),
    "depthwise_convolution": ((2, 3, 5, 5), {"kernel": (3, 3)}),
    "depthwise_deconvolution": ((2, 3, 5, 5), {"kernel": (3, 3)}),
    "embed": ("int", {"n_inputs": 5, "n_features": 4}),
    "fixed_point_quantized_affine": AFFINE, "fixed_point_quantized_convolution": CONV,
    "fused_batch_normalization": ((2, 3, 4, 4), {}),
    "group_normalization": ((2, 4, 3, 3), {"num_groups": 2}),
    "gru": ((3, 2, 4), {"h": V((1, 1, 2, 5))}),
    "inq_affine": AFFINE, "inq_convolution": CONV,
    "instance_normalization": ((2, 3, 4, 4), {}), "layer_normalization": ((2, 3, 4, 4), {}),
    "lstm": ((3, 2, 4), {"h": V((1, 1, 2, 5)), "c": V((1, 1, 2, 5))}),
    "lstm_cell": ((2, 4), {"h": V((2, 5)), "c": V((2, 5)), "state_size": 5}),
    "mean_subtraction": ((2, 3, 4, 4), {}),
    "min_max_quantize": ((2, 3), {}),
    "min_max_quantized_affine": AFFINE, "min_max_quantized_convolution": CONV,
    "multi_head_attention": ((3, 2, 4), {"key": V((3, 2, 4)), "value": V((3, 2, 4)),
                                         "num_heads": 2}),
    "pow2_quantized_affine": AFFINE, "pow2_quantized_convolution": CONV,
    "prelu": ((2, 3, 4), {}),
    "pruned_affine": AFFINE, "pruned_convolution": CONV,
    "rnn": ((3, 2, 4), {"h": V((1, 1, 2, 5))}),
    "spectral_norm": ((4, 3), {}),
    "svd_affine": ((2, 3), {"n_outmaps": 4, "r": 2}),
    "svd_convolution": ((2, 3, 5, 5), {"outmaps": 2, "kernel": (3, 3), "r": 2}),
    "transformer": ((3, 2, 8), {"tgt": V((3, 2, 8)), "embed_dim": 8, "num_heads": 2,
                                "num_encoder_layers": 1, "num_decoder_layers": 1,
                                "dim_feedforward": 8}),
    "transformer_decode": ((3, 2, 8), {"memory": V((3, 2, 8)), "embed_dim": 8, "num_heads": 2,
                                       "dim_feedforward": 8}),
    "transformer_encode": ((3, 2, 8), {"embed_dim": 8, "num_heads": 2, "dim_feedforward": 8}),
    "weight_normalization": ((4, 3), {}),
}
PF_NOT_SWEPT = {
    "sync_batch_normalization": "needs a communicator (nnabla.communicators)",
    "LSTMCell": "a class; its constructor takes sizes only and __call__ runs PF.lstm_cell",
    "get_parameter": "swept with the parameter helpers (nn.parameter)",
    "get_parameter_or_create": "swept with the parameter helpers (nn.parameter)",
    "parametric_function_api": "a decorator (tests/api/test_bad_input.py: user functions)",
    "calc_uniform_lim_glorot": "a helper of nnabla.initializer, not a layer",
    "ConstantInitializer": "an initializer class", "NormalInitializer": "an initializer class",
    "UniformInitializer": "an initializer class",
    "WeightNormalizationScaleInitializer": "an initializer class",
}
# Size arguments: a negative or zero value is a mistake (not an axis).
COUNTS = {"n_outmaps", "outmaps", "n_inputs", "n_features", "kernel", "r", "multiplier",
          "divisor", "group", "num_groups", "state_size", "num_heads", "embed_dim",
          "num_layers", "num_encoder_layers", "num_decoder_layers", "dim_feedforward",
          "deformable_group", "itr", "num_bits", "max_iter", "k_embed_dim", "v_embed_dim",
          "out_dim"}
# Arguments that take an initializer (an array or a callable): a str is a mistake.
INITIALIZER_SUFFIX = "_init"


def pf_calls(name):
    """The working call of ``PF.<name>`` and each of its mistakes."""
    first, kwargs = PF_CALLS[name]
    api = f"PF.{name}"
    x = _v(3, 2, integer=True) if first == "int" else _v(*first)
    kwargs = {k: _v(*v) if isinstance(v, V) else v for k, v in kwargs.items()}
    params = inspect.signature(getattr(PF, name)).parameters
    # Every argument with a value to spoil: given ones, then defaults that are not None.
    spoil = dict(kwargs)
    for arg, p in list(params.items())[1:]:
        if arg in spoil or arg == "name" or p.default is inspect.Parameter.empty:
            continue
        if p.default is not None or arg.endswith(INITIALIZER_SUFFIX) or arg in (
                "pad", "stride", "dilation"):
            spoil[arg] = p.default
    first_name = next(iter(params))

    def mistakes(arg, value):
        if arg == first_name:
            return variable_mistakes(value)
        if arg.endswith(INITIALIZER_SUFFIX) and value is None:
            return [("a str", "x", RAISE), ("an int", 1, EITHER)]
        if arg in ("pad", "stride", "dilation") and value is None:
            return ints_mistakes((1, 1), allows_none=True, counts=arg != "pad")
        if arg.startswith("ql_"):           # quantization levels: reals
            return float_mistakes()
        if arg in ("rng", "comm", "activation", "apply_w", "apply_b", "outputs"):
            return [("a str", "x", RAISE)] if arg != "activation" else []
        return mistakes_for_value(value, allows_none=params[arg].default is None,
                                  count=arg in COUNTS)

    calls = _mutations(api, "PF", name, [x], kwargs, [first_name], mistakes)
    for arg, value in spoil.items():
        if arg in kwargs:
            continue
        for label, bad, expect in mistakes(arg, value):
            calls.append(Call(f"{api} {arg}={label}", api, arg, "PF", name, (x,),
                              {**kwargs, arg: bad}, expect))
    return calls


PF_NAMES = sorted(PF_CALLS)


# --- nnabla.solvers ---------------------------------------------------------------------

SOLVER_NAMES = sorted(S.SPECS)


def solver_calls(name):
    """``S.<name>()`` with each hyper-parameter spoiled (the defaults are the working call)."""
    api = f"S.{name}"
    kwargs = dict(S.SPECS[name].args)

    def mistakes(arg, value):
        return mistakes_for_value(value, allows_none=False)
    return _mutations(api, "S", name, [], kwargs, [], mistakes)


def recorded_calls():
    """Every call whose nnabla 1.39 answer is recorded (tests/data/bad_input_sweep)."""
    out = []
    for snake in F_NAMES:
        out += function_calls(snake)
    for name in PF_NAMES:
        out += pf_calls(name)
    for name in SOLVER_NAMES:
        out += solver_calls(name)
    return out
