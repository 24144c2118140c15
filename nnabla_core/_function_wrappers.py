"""Builds the ``F.*`` functions from the spec table.

Each wrapper is generated code with nnabla's signature (inputs, arguments,
``n_outputs=-1, outputs=None``) and a docstring from the spec, and calls
:func:`nnabla._dispatch.call`.
"""
from __future__ import annotations

import keyword

from ._dispatch import call, graph_builders, imperative_runners
from ._nd_array import NdArray
from ._spec.base import REQUIRED
from ._state import STATE
from ._variable import Variable
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
    checking or resolution is repeated. Functions with optional inputs always take the
    general path."""
    if not spec.inputs or any(i.optional for i in spec.inputs):
        return ""
    namespace.update(_imp=imperative_runners, _graph=graph_builders, _State=STATE,
                     _Reg=REGISTRY, _Nd=NdArray, _Var=Variable, _wrap=NdArray._wrap,
                     _name=spec.name)
    names = [i.name for i in spec.inputs]
    is_nd = " and ".join(f"{n}.__class__ is _Nd" for n in names)
    is_var = " and ".join(f"{n}.__class__ is _Var" for n in names)
    arrays = "(" + "".join(f"{n}._array, " for n in names) + ")"
    nodes = "[" + "".join(f"{n}._node, " for n in names) + "]"
    shapes = "(" + "".join(f"_a[{k}].shape, " for k in range(len(names))) + ")"
    node_shapes = "(" + "".join(f"_a[{k}].data.shape, " for k in range(len(names))) + ")"
    args = "(" + "".join(f"{a.name}, " for a in spec.args) + ")"
    return (f"    if outputs is None and n_outputs == -1:\n"
            f"        if {is_nd}:\n"
            f"            _a = {arrays}\n"
            f"            _s = _State.context_stack\n"
            f"            _c = _s[-1] if _s else _State.default_context\n"
            f"            try:\n"
            f"                _r = _imp.get((_name, {shapes}, {args}, tuple(_c.backend),\n"
            f"                               _c.device_id, _Reg.version))\n"
            f"            except TypeError:\n"
            f"                _r = None\n"
            f"            if _r is not None:\n"
            f"                return _wrap(_r(_a))\n"
            f"        elif _State.auto_forward and {is_var}:\n"
            f"            _a = {nodes}\n"
            f"            _s = _State.context_stack\n"
            f"            _c = _s[-1] if _s else _State.default_context\n"
            f"            try:\n"
            f"                _r = _graph.get((_name, {node_shapes}, {args}, tuple(_c.backend),\n"
            f"                                 _c.device_id, _Reg.version))\n"
            f"            except TypeError:\n"
            f"                _r = None\n"
            f"            if _r is not None:\n"
            f"                return _r(_a, _c)\n")


def _call_variadic(spec, inputs, kw):
    n_outputs = kw.pop("n_outputs", -1)
    outputs = kw.pop("outputs", None)
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    return call(spec, inputs, kw, n_outputs, outputs)
