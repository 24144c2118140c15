"""Backward functions of fused functions, by differentiating their composition.

A fused function (a normalization, a recurrent network, a fused convolution)
equals a composition of basic ``nnabla.functions`` whose backward functions are
registered. Its backward function rebuilds that composition on the same input
Variables and returns ``nn.grad`` of it: a graph of basic functions, hence
differentiable to any order. The composition must have no side effects (no
running-statistics updates, no random draws).

Inputs may come with omitted optional inputs as ``None`` (``nn.grad``) or left
out of the list (nnabla's testers filter them out); a ``layout`` tells where the
given inputs sit, and the gradients are returned in the layout they came in.
"""
from __future__ import annotations


def expand(inputs, present):
    """``inputs`` placed at the positions where ``present`` is true (None elsewhere).

    A list as long as ``present`` is taken as already placed.
    """
    if len(inputs) == len(present):
        return list(inputs)
    given = iter(inputs)
    return [next(given, None) if p else None for p in present]


def composite_backward(forward, layout=None):
    """A backward function that differentiates ``forward(inputs, output_shapes, **args)``.

    Args:
        forward (callable): returns the function's outputs (None for those it does not
            rebuild) from the inputs in their full layout.
        layout (callable): ``layout(n_given, **args)``, the presence flags of the full
            input list; None: the inputs are always complete.
    """
    def backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, **args):
        import nnabla as nn
        full = expand(inputs, layout(len(inputs), **args)) if layout is not None \
            else list(inputs)
        ys = forward(full, output_shapes, **args)
        pairs = [(y, g) for y, g in zip(ys, grad_outputs) if y is not None and g is not None]
        wrt = [i for i, v in enumerate(full) if v is not None and v.need_grad]
        grads = [None] * len(full)
        if pairs and wrt:
            found = nn.grad([y for y, _ in pairs], [full[i] for i in wrt],
                            grad_outputs=[g for _, g in pairs])
            for i, g in zip(wrt, found):
                grads[i] = g
        if len(inputs) == len(full):
            return grads
        return [g for g, v in zip(grads, full) if v is not None]
    return backward
