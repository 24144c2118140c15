"""Builds the ``F.*`` functions from the spec table.

Each wrapper is generated code with nnabla's signature (inputs, arguments,
``n_outputs=-1, outputs=None``) and a docstring from the spec, and calls
:func:`nnabla._dispatch.call`.
"""
from __future__ import annotations

import keyword

from . import _native_graph
from ._dispatch import call, graph_builders, imperative_runners
from ._nd_array import NdArray
from ._spec.base import REQUIRED
from .context import Context
from .plugins import REGISTRY

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
    """The ``F.<snake>`` function of ``spec``: generated code with the exact signature, so no
    argument is re-mapped at call time."""
    wrapper = _generated(spec)
    wrapper.__module__ = "nnabla.functions"
    wrapper.__doc__ = _docstring(spec)
    return wrapper


def _generated(spec):
    names = [i.name for i in spec.inputs] + [a.name for a in spec.args]
    bad = [n for n in names if keyword.iskeyword(n) or not n.isidentifier()]
    if bad:
        raise ValueError(f"spec {spec.name}: input/argument names {bad} are not identifiers")
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
              + _fast_path(spec, namespace)
              + f"    return _call(_spec, {inputs}, {kwargs}, n_outputs, outputs)\n")
    exec(compile(source, f"<nnabla.functions.{spec.snake}>", "exec"), namespace)
    return namespace[spec.snake]


def _fast_path(spec, namespace):
    """Source lines running an imperative call (every input an NdArray) or an auto-forward
    call (every input a Variable) whose runner or graph builder :func:`nnabla._dispatch.call`
    recorded for the same shapes, arguments, context and plugin registry: no binding,
    checking or resolution is repeated (the wrapper's :class:`nnabla._native_graph.CallSite`,
    in C). Functions with optional inputs always take the general path."""
    if not spec.inputs or any(i.optional for i in spec.inputs):
        return ""
    namespace.update(_fast=_native_graph.CallSite(spec.name))
    inputs = "(" + "".join(f"{i.name}, " for i in spec.inputs) + ")"
    values = "(" + "".join(f"{a.name}, " for a in spec.args) + ")"
    return (f"    if outputs is None and n_outputs == -1:\n"
            f"        _r = _fast({inputs}, {values})\n"
            f"        if _r is not None:\n"
            f"            return _r\n")


_native_graph.bind_dispatch(NdArray, imperative_runners, graph_builders, REGISTRY, Context)


def _call_variadic(spec, inputs, kw):
    n_outputs = kw.pop("n_outputs", -1)
    outputs = kw.pop("outputs", None)
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    return call(spec, inputs, kw, n_outputs, outputs)
