"""Graph integration of :class:`nnabla.function.PythonFunction`."""
from __future__ import annotations

import copy
import weakref

from . import _graph
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
    if getattr(func, "in_nodes", None) is not None:
        # called again: as in nnabla, each call is its own graph node (the instance's
        # attributes are shared, its wiring is not)
        func = copy.copy(func)
    func.in_nodes = in_nodes
    func.out_refs = [weakref.ref(o) for o in out_nodes]
    func.family = HOST          # PythonFunctions read and write .d/.g: host arrays
    outs = [variable_of(o) for o in out_nodes]
    func.setup_impl(list(inputs), outs)
    _graph.link(func, in_nodes, out_nodes)
    if STATE.auto_forward:
        func.forward_impl(func.inputs, func.outputs)
        # what the backward reads (grad_depends_*): outputs always, inputs when grads flow
        read_ins, read_outs = _graph.backward_reads(func)
        for o in read_outs:
            out_nodes[o].needed = True
        if need_grad:
            for i in read_ins:
                in_nodes[i].needed = True
        for node in out_nodes:
            node.auto = True
    return outs[0] if len(outs) == 1 else tuple(outs)
