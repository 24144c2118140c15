"""``nn.grad``: gradients as new graph variables, differentiable again.

The backward graph is built from :mod:`nnabla.backward_functions` (functions
of ``nnabla.functions``), so ``nn.grad`` of its result gives second-order
gradients. In auto-forward mode the values are computed as the graph is built;
in static mode call ``forward`` on the returned variables.
"""
from __future__ import annotations

import numpy as np

from . import _graph
from ._dispatch import call_function
from ._kernel_grad import KernelGrad, kernel_grads
from ._nd_array import NdArray
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
        list of Variable (None for an input that ``outputs`` do not depend on).

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
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    grad_outputs = list(grad_outputs) if isinstance(grad_outputs, (list, tuple)) \
        else [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"nn.grad: argument 'grad_outputs' has {len(grad_outputs)} entries; "
                         f"expected {len(outputs)} (one per output)")
    order = _graph.topological_functions([y._node for y in outputs])
    reach = _reaching(order, {id(x._node) for x in inputs})
    grads = {}
    for y, g in zip(outputs, grad_outputs):
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
        for i, g in enumerate(_backward_of(f, wrt, gys, ins, outs)):
            if i in wrt and g is not None:
                _accumulate(grads, f.in_nodes[i], g)
    result = [grads.get(id(x._node)) for x in inputs]
    for r, keep in zip(result, list(persistent_outputs) + [False] * len(result)):
        if r is not None and keep:
            r.persistent = True
    if bind_grad_output:
        for x, r in zip(inputs, result):
            if r is not None:
                x.grad = r.data
    return result


def _accumulate(grads, node, g):
    key = id(node)
    if g.shape != node.data.shape:
        g = call_function("Reshape", g, shape=node.data.shape, inplace=False)
    grads[key] = g if key not in grads else call_function("Add2", grads[key], g)
