"""Graph integration of :class:`nnabla.function.PythonFunction`."""
from __future__ import annotations

import weakref

from . import _graph
from ._array import SyncedArray
from .array_family import HOST
from ._variable import Variable, VarNode, variable_of
from ._state import STATE


def call(func, inputs, n_outputs, outputs):
    for x in inputs:
        if not isinstance(x, Variable):
            raise TypeError(f"{func.name}: inputs must be nnabla.Variable; "
                            f"given {type(x).__name__}")
    in_nodes = [x._node for x in inputs]
    n = max(func.min_outputs(), n_outputs if n_outputs and n_outputs > 0 else 0)
    need_grad = any(x.need_grad for x in in_nodes)
    out_nodes = [VarNode((), need_grad) for _ in range(n)]
    func.in_nodes = in_nodes
    func.out_refs = [weakref.ref(o) for o in out_nodes]
    func.family = HOST          # PythonFunctions read and write .d/.g: host arrays
    outs = [variable_of(o) for o in out_nodes]
    func.setup_impl(list(inputs), outs)
    _graph.link(func, in_nodes, out_nodes)
    if STATE.auto_forward:
        run_forward(func)
        for node in in_nodes + out_nodes:
            node.needed = True
        for node in out_nodes:
            node.auto = True
    return outs[0] if len(outs) == 1 else tuple(outs)


def run_forward(func):
    func.forward_impl(func.inputs, func.outputs)


def run_backward(func, propagate_down, state):
    """Call ``backward_impl`` with nnabla's accum flags and the pass's output grads."""
    outs = [r() for r in func.out_refs]
    swapped = []
    for node in outs:
        if node is None:
            continue
        if node is state.root:
            saved = node.grad
            tmp = SyncedArray(saved.shape, saved.dtype)
            tmp.set(HOST.copy(state.seed.get(saved.dtype, HOST)))
            node.grad = tmp
            swapped.append((node, saved))
        elif id(node) not in state.written:
            node.grad.zero()
    accum = [n.parent is None or id(n) in state.written for n in func.in_nodes]
    try:
        func.backward_impl(func.inputs, func.outputs, list(propagate_down), accum)
    finally:
        for node, saved in swapped:
            node.grad = saved
    for n, pd in zip(func.in_nodes, propagate_down):
        if pd:
            state.written.add(id(n))
