"""The einsum kernel: forward by ``xp.einsum``, backward as one einsum per input.

The equation is expanded once (``setup``) into explicit single letters, the ellipsis
axes included, so the backward pass can name every axis. The gradient of input
``i`` is the einsum of the output gradient with every other input into input i's
letters, where

- a letter repeated within input i (a diagonal, ``ii``) is renamed and tied to its
  first occurrence by an identity matrix, which puts the gradient on the diagonal;
- a letter only input i has (summed in forward) gets a vector of ones, which
  broadcasts the gradient along it;
- size-1 axes that were broadcast are summed back at the end.
"""
from __future__ import annotations

from nnabla.backward_function.einsum import gradient_plan as _gradient_plan

from ._base import Kernel, unbroadcast


class Einsum(Kernel):
    def setup(self):
        from nnabla.function_spec import parse_einsum
        self.terms, self.out, self.sizes = parse_einsum(self.spec, self.equation,
                                                        self.in_shapes)
        self.expanded = ",".join(self.terms) + "->" + self.out
        self.plans = [_gradient_plan(self.terms, self.out, i) for i in range(len(self.terms))]

    def forward(self, xs):
        y = self.xp.einsum(self.expanded, *xs, optimize=len(xs) > 1)
        return (self.xp.ascontiguousarray(y).reshape(self.out_shapes[0]),)

    def _full(self, x, term):
        """``x`` broadcast to the full size of each of its letters (a view)."""
        return self.xp.broadcast_to(x, tuple(self.sizes[c] for c in term))

    def _grad(self, xs, dy, i):
        xp = self.xp
        target, extras = self.plans[i]
        operands, subscripts = [dy], [self.out]
        for j, (x, term) in enumerate(zip(xs, self.terms)):
            if j != i:
                operands.append(self._full(x, term))
                subscripts.append(term)
        for kind, letters in extras:
            n = self.sizes[letters[0]]
            operands.append(xp.eye(n, dtype=dy.dtype) if kind == "eye"
                            else xp.ones(n, dtype=dy.dtype))
            subscripts.append(letters)
        eq = ",".join(subscripts) + "->" + target
        g = xp.einsum(eq, *operands, optimize=len(operands) > 2)
        shape = self.in_shapes[i]
        return xp.ascontiguousarray(unbroadcast(xp, g, shape)).reshape(shape)

    def backward(self, xs, ys, dys, propagate_down):
        dy = self.xp.asarray(dys[0])     # a 0-d gradient may come as a Python scalar
        return [self._grad(xs, dy, i) if propagate_down[i] else None
                for i in range(len(xs))]
