"""``call_function``: the single entry point every ``F.*`` call goes through.

On NdArrays it runs the kernel at once and returns NdArrays (imperative mode);
on Variables it adds a :class:`Function` to the graph and, in auto-forward
mode, runs it immediately.
"""
from __future__ import annotations

import numpy as np

from . import _graph
from ._array import SyncedArray
from ._nd_array import NdArray
from .plugins.resolve import resolve
from ._spec import SPECS
from ._spec.binding import bind_args, infer
from ._variable import Variable, VarNode, variable_of
from .auto_forward import STATE as _AUTO
from .context import _default as _ctx_default
from .context import _stack as _ctx_stack
from .plugins import REGISTRY
from .function import Function, dtype_plan

_ndarray = np.ndarray


def _classify(spec, inputs):
    """'nd' if every given input is an NdArray, 'var' if Variables; raise otherwise."""
    kind = None
    for i, x in enumerate(inputs):
        if x is None:
            continue
        if isinstance(x, Variable):
            k = "var"
        elif isinstance(x, NdArray):
            k = "nd"
        else:
            name = spec.inputs[min(i, len(spec.inputs) - 1)].name
            raise TypeError(f"{spec.api_name}: input '{name}' is of type {type(x).__name__}; "
                            "expected nnabla.Variable or nnabla.NdArray")
        if kind is None:
            kind = k
        elif kind != k:
            kind = "var"
    return kind or "var"


_memo = {}
_MEMO_LIMIT = 50000


def clear_memo():
    _memo.clear()


def _setup(spec, inputs, kw, ctx, n_outputs):
    """(args, output shapes, kernel binding) of a call, memoised on its hashable parts.

    Validation, shape inference and kernel resolution depend only on the function,
    the input shapes, the arguments, the context's backends and the registry.
    """
    in_shapes = tuple(None if x is None else x.shape for x in inputs)
    try:
        key = (spec.name, in_shapes, tuple(kw.items()), tuple(ctx.backend), REGISTRY.version,
               n_outputs)
        hit = _memo.get(key)
    except TypeError:           # an unhashable argument value (a list): no memo
        key, hit = None, None
    if hit is None:
        args, out_shapes = infer(spec, list(in_shapes), bind_args(spec, kw), n_outputs)
        hit = (args, out_shapes, resolve(spec, args, ctx), in_shapes)
        if key is not None:
            if len(_memo) > _MEMO_LIMIT:
                _memo.clear()
            _memo[key] = hit
    return hit


def call_function(type_name, *inputs, n_outputs=-1, outputs=None, **kw):
    """Create (and maybe run) function ``type_name`` on ``inputs`` with arguments ``kw``.

    Returns one Variable/NdArray, or a tuple when the function has several outputs.
    """
    spec = SPECS[type_name]
    if spec.variadic_input and len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    kind = _classify(spec, inputs)
    ctx = _ctx_stack[-1] if _ctx_stack else _ctx_default[0]
    args, out_shapes, binding, in_shapes = _setup(spec, inputs, kw, ctx, n_outputs)
    kernel = binding.kernel(spec, args, in_shapes, out_shapes)
    if kind == "nd":
        result = _run_imperative(spec, binding, kernel, inputs, out_shapes, outputs)
    else:
        result = _build(spec, args, ctx, binding, kernel, inputs, out_shapes, outputs)
    if len(result) == 1 and not spec.outputs[-1].variadic:
        return result[0]
    return tuple(result)


def _run_imperative(spec, binding, kernel, inputs, out_shapes, outputs):
    fam = binding.family
    ins, outs, _ = dtype_plan(spec, len(inputs), len(out_shapes), binding.type_config)
    xs = [None if x is None else x._array.get(dt, fam) for x, dt in zip(inputs, ins)]
    ys = kernel.forward(xs)
    result = []
    for i, (y, dt, shape) in enumerate(zip(ys, outs, out_shapes)):
        if y.__class__ is not _ndarray and fam == "cpu":
            y = np.asarray(y)
        if y.dtype != dt and (y.dtype.kind == "f" or dt.kind != "f"):
            y = y.astype(dt)
        if y.shape != shape:
            y = y.reshape(shape)
        if outputs is not None and i < len(outputs) and outputs[i] is not None:
            out = outputs[i]
            out._array.set(y, fam)
        else:
            arr = SyncedArray(shape, dt)
            arr.set(y, fam)
            out = NdArray._wrap(arr)
        result.append(out)
    for i in spec._mutated:
        x = inputs[i]
        if x is not None and xs[i].dtype != x._array.dtype:
            x._array.set(xs[i].astype(x._array.dtype), fam)
    return result


def _as_node(x):
    if x is None:
        return None
    if isinstance(x, NdArray):      # an NdArray inside a graph call acts as a constant leaf
        node = VarNode(x.shape)
        node.data = x._array
        return node
    return x._node


def _build(spec, args, ctx, binding, kernel, inputs, out_shapes, outputs):
    in_nodes = [_as_node(x) for x in inputs]
    need_grad = spec.differentiable and any(n is not None and n.need_grad for n in in_nodes)
    out_nodes = []
    for i, shape in enumerate(out_shapes):
        if outputs is not None and i < len(outputs) and outputs[i] is not None:
            node = outputs[i]._node
            if node.data.shape != shape:
                node.data.reshape(shape)
                node.grad.reshape(shape)
        else:
            node = VarNode(shape, need_grad)
        out_nodes.append(node)
    f = Function(spec, args, ctx, binding, kernel, in_nodes, out_nodes)
    _graph.link(f, in_nodes, out_nodes)
    if _AUTO[0]:
        f.run_forward()
        _graph.mark_auto(f, in_nodes, out_nodes, need_grad)
    return [variable_of(n) for n in out_nodes]
