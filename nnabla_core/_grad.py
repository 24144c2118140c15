"""``nn.grad``: gradients of outputs with respect to inputs, as new variables."""
from __future__ import annotations

import numpy as np

from ._variable import Variable


def grad(outputs, inputs, grad_outputs=None, persistent_outputs=[], bind_grad_output=False):
    """Gradients of ``outputs`` w.r.t. ``inputs`` (first order).

    Runs forward (if needed) and backward on the graph, leaving the inputs'
    ``.g`` untouched, and returns one Variable per input holding the gradient.

    Args:
        outputs (list of Variable): the outputs to differentiate.
        inputs (list of Variable): the variables to differentiate with respect to.
        grad_outputs (list of None, scalar, numpy.ndarray or NdArray): output gradients
            (default 1).
    """
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if grad_outputs is None:
        grad_outputs = [1] * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"nn.grad: argument 'grad_outputs' has {len(grad_outputs)} entries; "
                         f"expected {len(outputs)} (one per output)")
    saved = [(x, x.g.copy(), x.need_grad) for x in inputs]
    try:
        for x in inputs:
            x.grad.zero()
            x.need_grad = True
        for y, g in zip(outputs, grad_outputs):
            if not any(f for f in [y.parent]) or y.parent is None:
                continue
            if not y._node.data.heads:
                y.forward()
            y.backward(1 if g is None else g)
        results = [Variable.from_numpy_array(np.array(x.g, copy=True)) for x in inputs]
    finally:
        for x, g, need_grad in saved:
            x.g = g
            x.need_grad = need_grad
    return results
