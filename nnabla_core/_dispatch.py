"""``call_function``: the single entry point every ``F.*`` call goes through.

On NdArrays it runs the kernel at once and returns NdArrays (imperative mode);
on Variables it adds a :class:`Function` to the graph and, in auto-forward
mode, runs it immediately.

This is the hottest path of dynamic and imperative code, so the work that
depends only on (function, input shapes, arguments, context) -- validation,
shape inference, kernel resolution, dtype planning -- is memoised, and the
rest is kept to straight-line code.
"""
from __future__ import annotations

import weakref

from . import _execute, _graph, _native_graph
from ._array import SyncedArray
from ._nd_array import NdArray
from ._spec import SPECS
from ._spec.binding import bind_args, infer
from ._variable import Variable, VarNode
from ._state import STATE, cache
from .function import Function
from .plugins import REGISTRY
from .plugins.resolve import resolve

_memo = cache()
_MEMO_LIMIT = 50000
# The imperative fast path of the generated ``F.*`` wrappers (``_function_wrappers``): the
# runner of a call whose inputs are all NdArrays, keyed by (function name, input shapes,
# argument values, context backends, device, registry version). Filled by :func:`call`.
imperative_runners = cache()

# The auto-forward fast path of the wrappers: the graph builder (see :func:`_graph_builder`) of
# a call whose inputs are all Variables, under the same key. Filled by :func:`call`.
graph_builders = cache()

# Records a call whose inputs include an nn.graph_def ProtoVariable (set by nnabla.core).
proto_recorder = None


def _setup(spec, in_shapes, kw, ctx, n_outputs):
    """(args, output shapes, binding, dtype plan, shared kernel or None, imperative runner or
    None, auto-forward graph builder or None), memoised on the call's hashable parts."""
    try:
        key = (spec.name, in_shapes, tuple(kw.items()), tuple(ctx.backend), ctx.device_id,
               REGISTRY.version, n_outputs)
        hit = _memo.get(key)
    except TypeError:           # an unhashable argument value (a list): no memo
        key, hit = None, None
    if hit is None:
        args, out_shapes = infer(spec, list(in_shapes), bind_args(spec, kw), n_outputs)
        binding = resolve(spec, args, ctx)
        plan = _execute.dtype_plan(spec, len(in_shapes), len(out_shapes), binding.type_config)
        shared = runner = builder = None
        if binding.kernel.shareable:
            shared = _execute.new_kernel(binding, spec, args, in_shapes, out_shapes)
            runner = _execute.imperative_runner(_execute.Call(spec, shared, binding.family, plan),
                                                out_shapes)
            if runner is not None:
                builder = _graph_builder(spec, args, binding, shared, plan, runner)
        hit = (args, out_shapes, binding, plan, shared, runner, builder)
        if key is not None:
            if len(_memo) > _MEMO_LIMIT:
                _memo.clear()
            _memo[key] = hit
    return hit


def _shapes(spec, inputs):
    """Input shapes, their data (SyncedArray or None), and whether any input is an NdArray
    (imperative mode)."""
    shapes, arrays = [], []
    imperative = None
    for i, x in enumerate(inputs):
        cls = x.__class__
        if cls is Variable or isinstance(x, Variable):
            a = x._node.data
        elif cls is NdArray or isinstance(x, NdArray):
            a = x._array
            imperative = True       # nnabla: one NdArray input makes the call imperative
        elif x is None:
            a = None
        elif getattr(x, "_is_proto_variable", False):
            return None, None, False        # nn.graph_def records the call (see call())
        else:
            name = spec.inputs[min(i, len(spec.inputs) - 1)].name
            raise TypeError(f"{spec.api_name}: input '{name}' is of type {type(x).__name__}; "
                            "expected nnabla.Variable or nnabla.NdArray")
        shapes.append(None if a is None else a.shape)
        arrays.append(a)
    return tuple(shapes), arrays, bool(imperative)


def call(spec, inputs, kw, n_outputs=-1, outputs=None):
    """Run or build ``spec`` on ``inputs`` (a tuple) with arguments ``kw`` (a dict)."""
    in_shapes, arrays, imperative = _shapes(spec, inputs)
    if arrays is None:
        return proto_recorder(spec, inputs, kw, n_outputs)
    stack = STATE.context_stack
    ctx = stack[-1] if stack else STATE.default_context
    args, out_shapes, binding, plan, kernel, runner, builder = _setup(spec, in_shapes, kw, ctx,
                                                                      n_outputs)
    if imperative and runner is not None and outputs is None:
        if n_outputs == -1 and None not in arrays:
            _remember(imperative_runners, spec, in_shapes, kw, ctx, runner)
        return NdArray._wrap(runner(arrays))
    if builder is not None and outputs is None and STATE.auto_forward:
        if n_outputs == -1 and None not in arrays:
            _remember(graph_builders, spec, in_shapes, kw, ctx, builder)
        return builder([x._node if x.__class__ is Variable else _as_node(x) for x in inputs],
                       ctx)
    if kernel is None:
        kernel = _execute.new_kernel(binding, spec, args, in_shapes, out_shapes)
    if imperative:
        result = _run_imperative(spec, binding, kernel, inputs, out_shapes, outputs, plan)
    else:
        result = _build(spec, args, ctx, binding, kernel, inputs, out_shapes, outputs, plan)
    if len(result) == 1 and not spec.outputs[-1].variadic:
        return result[0]
    return tuple(result)


def _remember(table, spec, in_shapes, kw, ctx, runner):
    """Record ``runner`` in ``table`` for the wrappers' fast paths (inputs all NdArrays or
    all Variables, hashable arguments, no ``outputs``/``n_outputs``): the key is what the
    wrapper can build from its own parameters without binding or checking anything again."""
    if tuple(kw) != tuple(a.name for a in spec.args):
        return                  # not the wrapper's complete, ordered arguments
    try:
        key = (spec.name, in_shapes, tuple(kw.values()), tuple(ctx.backend), ctx.device_id,
               REGISTRY.version)
        if len(table) > _MEMO_LIMIT:
            table.clear()
        table[key] = runner
    except TypeError:           # an unhashable argument value: no fast path
        pass


def _graph_builder(spec, args, binding, kernel, plan, runner):
    """``build(in_nodes, ctx) -> Variable``: an auto-forward call of a shared one-output
    kernel (``runner``, see :func:`_execute.imperative_runner`): runs it, then adds the
    function and its output to the graph, as :func:`_build` does for every other call
    (:class:`nnabla._native_graph.Builder`, in C: it fills the nodes' slots as
    ``VarNode.__init__`` and ``Function.__init__`` do; tests/core/test_auto_forward_nodes.py
    compares every slot). None for an in-place reshape, whose output shares its input's
    memory."""
    if spec.name == "Reshape" and args.get("inplace"):
        return None
    in_dtypes, out_dtypes, grad_dtype = plan
    unary = len(spec.inputs) == 1 and not (spec.variadic_input or spec.inputs[0].optional)
    return _native_graph.Builder(spec, args, binding, kernel, in_dtypes, out_dtypes, grad_dtype,
                                 runner, unary, spec.differentiable, _graph.link,
                                 _graph.mark_needed)


_native_graph.bind_function(Function, STATE)


def call_function(type_name, *inputs, n_outputs=-1, outputs=None, **kw):
    """Create (and maybe run) function ``type_name`` on ``inputs`` with arguments ``kw``.

    Returns one Variable/NdArray, or a tuple when the function has several outputs.
    """
    spec = SPECS[type_name]
    if spec.variadic_input and len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    return call(spec, inputs, kw, n_outputs, outputs)


def _synced(x):
    """The SyncedArray holding an input's values (a Variable's data in imperative calls)."""
    return None if x is None else x._array if isinstance(x, NdArray) else x._node.data


def _run_imperative(spec, binding, kernel, inputs, out_shapes, outputs, plan):
    call = _execute.Call(spec, kernel, binding.family, plan)
    result = []
    for i, shape in enumerate(out_shapes):
        given = outputs[i] if outputs is not None and i < len(outputs) else None
        if given is None:
            given = NdArray._wrap(SyncedArray(shape, plan[1][i]))
        elif given.shape != shape:
            given._array.reshape(shape)
        result.append(given)
    _execute.forward(call, [_synced(x) for x in inputs], [out._array for out in result])
    return result


def _as_node(x):
    if x is None:
        return None
    if isinstance(x, Variable):
        return x._node
    if isinstance(x, NdArray):      # an NdArray inside a graph call acts as a constant leaf
        node = VarNode(x.shape)
        node.data = x._array
        return node
    return x._node


def _build(spec, args, ctx, binding, kernel, inputs, out_shapes, outputs, plan):
    in_nodes = [x._node if x.__class__ is Variable else _as_node(x) for x in inputs]
    need_grad = False
    if spec.differentiable:
        for n in in_nodes:
            if n is not None and n.need_grad:
                need_grad = True
                break
    auto = STATE.auto_forward
    if outputs is None:
        out_nodes = [VarNode(shape, need_grad) for shape in out_shapes]
    else:
        out_nodes = _given_outputs(outputs, out_shapes, need_grad)
    if STATE.global_recompute:
        for n in out_nodes:
            n.recompute = True
    f = Function(spec, args, ctx, binding, kernel, in_nodes, out_nodes, plan)
    _graph.link(f, in_nodes, out_nodes)
    if not auto and spec.dynamic_shape and _execute.sizes_known(
            spec, [None if n is None else n.data for n in in_nodes]):
        f.run_forward()     # as nnabla's setup: data-dependent sizes from the inputs' data
    if auto:
        f.run_forward()
        if need_grad:
            _graph.mark_needed(f, in_nodes, out_nodes)
        for n in out_nodes:
            n.auto = True
    result = []
    for node in out_nodes:
        ref = node.owner
        v = None if ref is None else ref()
        if v is None:
            v = Variable.__new__(Variable)
            v._node = node
            node.owner = weakref.ref(v)
        result.append(v)
    return result


def _given_outputs(outputs, out_shapes, need_grad):
    nodes = []
    for i, shape in enumerate(out_shapes):
        out = outputs[i] if i < len(outputs) else None
        if isinstance(out, NdArray):     # a graph output writing into the given array
            node = VarNode(shape, need_grad)
            node.data = out._array
            if out.shape != shape:
                out._array.reshape(shape)
        elif out is not None:
            node = out._node
            if node.data.shape != shape:
                node.data.reshape(shape)
                node.grad.reshape(shape)
        else:
            node = VarNode(shape, need_grad)
        nodes.append(node)
    return nodes
