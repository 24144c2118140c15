"""``nn.grad``: gradients as new graph variables, differentiable again.

The backward graph is built from :mod:`nnabla.backward_functions` (functions
of ``nnabla.functions``), so ``nn.grad`` of its result gives second-order
gradients. In auto-forward mode the values are computed as the graph is built;
in static mode call ``forward`` on the returned variables.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _graph
from ._dispatch import call_function
from ._kernel_grad import KernelGrad, kernel_grads
from ._nd_array import NdArray
from ._state import STATE
from ._variable import Variable, variable_of
from .backward_functions import registry


def _as_grad_variable(value, shape):
    if isinstance(value, Variable):
        return value
    if value is None:
        value = 1
    if isinstance(value, NdArray):
        value = value.data
    arr = np.broadcast_to(np.asarray(value, dtype=np.float32), shape)
    return Variable.from_numpy_array(np.array(arr))


def _check_grad_output(k, value, shape):
    """Entry ``k`` of nn.grad's ``grad_outputs``: None, a number, or an array (numpy array,
    NdArray or Variable) of the output's shape, as nnabla requires."""
    if value is None or (isinstance(value, (numbers.Real, np.number)) and
                         not isinstance(value, (bool, np.bool_))):
        return
    if isinstance(value, (np.ndarray, NdArray, Variable)):
        if value.shape == () or tuple(value.shape) == shape:
            return
        raise ValueError(f"nn.grad: argument 'grad_outputs' entry {k} has shape "
                         f"{tuple(value.shape)}; expected {shape}, the shape of output {k}")
    raise TypeError(f"nn.grad: argument 'grad_outputs' entry {k} is of type "
                    f"{type(value).__name__}; expected None, a number, or an array "
                    f"(numpy.ndarray, NdArray or Variable) of shape {shape}")


def _reaching(order, targets):
    """Ids of nodes that depend on any of ``targets`` (including the targets)."""
    reach = set(targets)
    for f in order:
        if any(n is not None and id(n) in reach for n in f.in_nodes):
            for ref in f.out_refs:
                node = ref()
                if node is not None:
                    reach.add(id(node))
    return reach


def _backward_of(f, wrt, grad_outputs, inputs, outputs):
    backward = registry.get(f.info.type_name)     # PythonFunctions may register by name too
    if backward is None:
        if isinstance(f, KernelGrad):
            f.backward_impl(None, None, None, None)        # raises, naming the function
        if f.python:
            raise NotImplementedError(f"nn.grad: {f.name} is a PythonFunction without a "
                                      "registered backward function")
        return kernel_grads(f, wrt, grad_outputs, inputs, outputs)
    in_shapes = [None if n is None else n.data.shape for n in f.in_nodes]
    out_shapes = [v.shape for v in outputs]
    grads = backward(grad_outputs, inputs, in_shapes, outputs, out_shapes, **f.info.args)
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    return grads + [None] * (len(inputs) - len(grads))


def grad(outputs, inputs, grad_outputs=None, persistent_outputs=[], bind_grad_output=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` as graph variables.

    Args:
        outputs (list of Variable): the variables to differentiate.
        inputs (list of Variable): the variables to differentiate with respect to.
        grad_outputs (list of None, scalar, numpy.ndarray, NdArray or Variable): the
            gradients of ``outputs`` (None means ones).
        persistent_outputs (list of bool): mark the returned gradients persistent.
        bind_grad_output (bool): also write each output gradient into the input's ``grad``.

    Returns:
        list of Variable: one per input; zeros (``F.constant``) of the input's shape for an
        input that ``outputs`` do not depend on or whose ``need_grad`` is False.

    Raises:
        TypeError: when ``outputs`` or ``inputs`` is not a Variable or an iterable of them.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> x = nn.Variable.from_numpy_array(np.array([1., 2.]), need_grad=True)
        >>> with nn.auto_forward():
        ...     y = F.sum(x ** 3)
        ...     (dx,) = nn.grad([y], [x])
        ...     (ddx,) = nn.grad([F.sum(dx)], [x])
        >>> dx.d, ddx.d
        (array([ 3., 12.], dtype=float32), array([ 6., 12.], dtype=float32))
    """
    outputs = _variables(outputs, "outputs")
    inputs = _variables(inputs, "inputs")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    grad_outputs = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) \
        else [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"nn.grad: argument 'grad_outputs' has {len(grad_outputs)} entries; "
                         f"expected {len(outputs)} (one per output)")
    if STATE.local_grad:
        # A backward function differentiating its composition: the partial derivatives
        # w.r.t. these very nodes; the outer nn.grad applies the chain rule past them.
        in_nodes = [[x._node] for x in inputs]
        order = _functions_above(outputs, {id(x._node) for x in inputs})
    else:
        order = _graph.topological_functions([y._node for y in outputs])
        in_nodes = _nodes_on_graph(order, inputs)
    reach = _reaching(order, {id(n) for nodes in in_nodes for n in nodes})
    grads = {}
    for k, (y, g) in enumerate(zip(outputs, grad_outputs)):
        _check_grad_output(k, g, tuple(y.shape))
        _accumulate(grads, y._node, _as_grad_variable(g, y.shape))
    for f in reversed(order):
        out_nodes = [r() for r in f.out_refs]
        if not any(n is not None and id(n) in grads for n in out_nodes):
            continue
        if not f.python and not f.spec.differentiable:
            continue
        wrt = [i for i, n in enumerate(f.in_nodes) if n is not None and id(n) in reach]
        if not wrt:
            continue
        gys = [grads.get(id(n)) if n is not None and id(n) in grads
               else _as_grad_variable(0, f.kernel.out_shapes[o] if not f.python else ())
               for o, n in enumerate(out_nodes)]
        ins = [None if n is None else variable_of(n) for n in f.in_nodes]
        outs = [variable_of(n) for n in out_nodes if n is not None]
        for i, g in enumerate(_local_backward_of(f, wrt, gys, ins, outs)):
            if i in wrt and g is not None:
                _accumulate(grads, f.in_nodes[i], g)
    result = [_sum_of(grads, nodes) if x.need_grad else None for x, nodes in zip(inputs, in_nodes)]
    # as nnabla: an input the outputs do not depend on (or without need_grad) gets zeros
    result = [call_function("Constant", val=0.0, shape=x.shape) if r is None else r
              for x, r in zip(inputs, result)]
    for r, keep in zip(result, list(persistent_outputs) + [False] * len(result)):
        if r is not None and keep:
            r.persistent = True
    if bind_grad_output:
        for x, r in zip(inputs, result):
            if r is not None:
                x.grad = r.data
    return result


def _local_backward_of(f, wrt, grad_outputs, inputs, outputs):
    """:func:`_backward_of` with ``nn.grad`` calls inside it (compositions) kept local."""
    saved = STATE.local_grad
    STATE.local_grad = True
    try:
        return _backward_of(f, wrt, grad_outputs, inputs, outputs)
    finally:
        STATE.local_grad = saved


def _functions_above(outputs, cut):
    """Functions on a path from the ``cut`` nodes (ids) or the leaves to ``outputs``, in
    topological order, without following the graph past a cut node."""
    needed = {id(y._node) for y in outputs}
    kept = []
    for f in reversed(_graph.topological_functions([y._node for y in outputs])):
        if any(r() is not None and id(r()) in needed for r in f.out_refs):
            kept.append(f)
            needed.update(id(n) for n in f.in_nodes if n is not None and id(n) not in cut)
    return kept[::-1]


def _nodes_on_graph(order, inputs):
    """The graph nodes standing for each input.

    A parameter enters a graph through views sharing its data and grad arrays (nnabla's
    variables compare equal when they share them), one view per use, so an input is matched
    by those arrays and its gradient is the sum over its views.
    """
    by_arrays = {}
    for f in order:
        for n in f.in_nodes:
            if n is not None:
                views = by_arrays.setdefault((id(n.data), id(n._grad)), [])
                if n not in views:
                    views.append(n)
    return [by_arrays.get((id(x._node.data), id(x._node._grad)), [x._node]) for x in inputs]


def _sum_of(grads, nodes):
    found = [grads[id(n)] for n in nodes if id(n) in grads]
    total = found[0] if found else None
    for g in found[1:]:
        total = call_function("Add2", total, g)
    return total


def _variables(values, name):
    """``values`` (a Variable or any iterable of them, e.g. ``dict.values()``) as a list."""
    if isinstance(values, Variable):
        return [values]
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"nn.grad: argument '{name}' must be a Variable or an iterable of "
                        f"Variables; given {type(values).__name__}") from None
    for v in values:
        if not isinstance(v, Variable):
            raise TypeError(f"nn.grad: argument '{name}' must hold Variables; given an "
                            f"element of type {type(v).__name__}")
    return values


def _accumulate(grads, node, g):
    key = id(node)
    if g.shape != node.data.shape:
        g = call_function("Reshape", g, shape=node.data.shape, inplace=False)
    grads[key] = g if key not in grads else call_function("Add2", grads[key], g)
