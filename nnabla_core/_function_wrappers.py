"""Builds the ``F.*`` functions from the spec table.

Each wrapper has nnabla's signature (inputs, arguments, ``n_outputs=-1,
outputs=None``) as a real ``inspect.Signature`` and a docstring generated from
the spec, and calls :func:`nnabla._dispatch.call_function`.
"""
from __future__ import annotations

import inspect
import keyword

from ._dispatch import call, call_function
from ._spec.base import REQUIRED

_P = inspect.Parameter


def _signature(spec):
    params = []
    if spec.variadic_input:
        params.append(_P(spec.inputs[0].name, _P.VAR_POSITIONAL))
    else:
        for inp in spec.inputs:
            default = None if inp.optional else _P.empty
            params.append(_P(inp.name, _P.POSITIONAL_OR_KEYWORD, default=default))
    kind = _P.KEYWORD_ONLY if spec.variadic_input else _P.POSITIONAL_OR_KEYWORD
    for arg in spec.args:
        default = _P.empty if arg.default is REQUIRED else arg.default
        params.append(_P(arg.name, kind, default=default))
    params.append(_P("n_outputs", kind, default=-1))
    params.append(_P("outputs", kind, default=None))
    return inspect.Signature(params)


def _docstring(spec):
    lines = [spec.doc or f"{spec.name} function.", "", "Args:"]
    for inp in spec.inputs:
        extra = " (optional)" if inp.optional else ""
        extra += " (variadic)" if inp.variadic else ""
        lines.append(f"    {inp.name} (~nnabla.Variable){extra}: input.")
    for arg in spec.args:
        default = "" if arg.default is REQUIRED else f" Default: {arg.default!r}."
        lines.append(f"    {arg.name} ({arg.kind}):{default}")
    lines += ["", "Returns:",
              "    ~nnabla.Variable or ~nnabla.NdArray (a tuple if several outputs)"]
    return "\n".join(lines)


def make_wrapper(spec):
    """The ``F.<snake>`` function of ``spec``: generated code with the exact signature
    (no argument re-mapping at call time), or a generic closure as a fallback."""
    fast = _generated(spec)
    if fast is not None:
        fast.__module__ = "nnabla.functions"
        fast.__doc__ = _docstring(spec)
        return fast
    return _closure(spec)


def _generated(spec):
    names = [i.name for i in spec.inputs] + [a.name for a in spec.args]
    if any(keyword.iskeyword(n) or not n.isidentifier() for n in names):
        return None
    namespace = {"_call": call, "_spec": spec, "_variadic": _call_variadic}
    params = []
    if spec.variadic_input:
        # nnabla's variadic functions take (*x, **kw): arguments arrive by keyword.
        name = spec.inputs[0].name
        source = (f"def {spec.snake}(*{name}, **kw):\n"
                  f"    return _variadic(_spec, {name}, kw)\n")
        exec(compile(source, f"<nnabla.functions.{spec.snake}>", "exec"), namespace)
        return namespace[spec.snake]
    else:
        for inp in spec.inputs:
            params.append(f"{inp.name}=None" if inp.optional else inp.name)
        inputs = "(" + "".join(f"{i.name}, " for i in spec.inputs) + ")"
    for k, arg in enumerate(spec.args):
        if arg.default is REQUIRED:
            params.append(arg.name)
        else:
            namespace[f"_d{k}"] = arg.default
            params.append(f"{arg.name}=_d{k}")
    params += ["n_outputs=-1", "outputs=None"]
    kwargs = "{" + ", ".join(f"{a.name!r}: {a.name}" for a in spec.args) + "}"
    source = (f"def {spec.snake}({', '.join(params)}):\n"
              f"    return _call(_spec, {inputs}, {kwargs}, n_outputs, outputs)\n")
    try:
        exec(compile(source, f"<nnabla.functions.{spec.snake}>", "exec"), namespace)
    except SyntaxError:
        return None
    return namespace[spec.snake]


def _call_variadic(spec, inputs, kw):
    n_outputs = kw.pop("n_outputs", -1)
    outputs = kw.pop("outputs", None)
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    return call(spec, inputs, kw, n_outputs, outputs)


def _closure(spec):
    type_name = spec.name
    input_names = spec.input_names
    n_in = 0 if spec.variadic_input else len(input_names)
    arg_names = spec.arg_names
    optional = {i.name for i in spec.inputs if i.optional}

    def wrapper(*a, n_outputs=-1, outputs=None, **kw):
        if spec.variadic_input:
            return call_function(type_name, *a, n_outputs=n_outputs, outputs=outputs, **kw)
        inputs = list(a[:n_in])
        for name in input_names[len(inputs):]:
            if name in kw:
                inputs.append(kw.pop(name))
            elif name in optional:
                inputs.append(None)
            else:
                raise TypeError(f"{spec.api_name}: missing required input '{name}'")
        extra = a[n_in:]
        if extra:
            if len(extra) > len(arg_names):
                raise TypeError(f"{spec.api_name}: takes at most {n_in + len(arg_names)} "
                                f"positional arguments; given {len(a)}")
            for name, value in zip(arg_names, extra):
                if name in kw:
                    raise TypeError(f"{spec.api_name}: got multiple values for '{name}'")
                kw[name] = value
        return call_function(type_name, *inputs, n_outputs=n_outputs, outputs=outputs, **kw)

    wrapper.__name__ = wrapper.__qualname__ = spec.snake
    wrapper.__module__ = "nnabla.functions"
    wrapper.__signature__ = _signature(spec)
    wrapper.__doc__ = _docstring(spec)
    return wrapper
