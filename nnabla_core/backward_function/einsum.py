"""``F.einsum``'s backward function: one einsum per input.

With the equation expanded into explicit letters (:func:`nnabla._spec.array_extra.
parse_einsum`), the gradient of input ``i`` is the einsum of ``dy`` with every
other input into input ``i``'s letters, where

- a letter repeated within input ``i`` (a diagonal, ``ii``) is renamed and tied to
  its first occurrence by an identity matrix, putting the gradient on the diagonal;
- a letter only input ``i`` has (summed in the forward pass) gets a vector of ones,
  broadcasting the gradient along it;
- the other inputs are broadcast to their letters' full sizes, and size-1 axes of
  input ``i`` that were broadcast are summed back.

Every gradient is an ``F.einsum`` of graph variables (and constants), hence
differentiable again.
"""
from __future__ import annotations

import string

import numpy as np

from ._shaping import constant
from ._util import F, reduce_to


def gradient_plan(terms, out, i):
    """Input ``i``'s gradient letters and its constant operands ``("eye"|"ones", letters)``.

    >>> gradient_plan(["ii"], "i", 0)
    ('ia', [('eye', 'ia')])
    >>> gradient_plan(["ij", "jk"], "i", 0)
    ('ij', [])
    >>> gradient_plan(["ij"], "i", 0)
    ('ij', [('ones', 'j')])
    """
    used = set("".join(terms)) | set(out)
    fresh = iter(c for c in string.ascii_letters if c not in used)
    target, extras, seen = [], [], set()
    for c in terms[i]:
        if c in seen:
            d = next(fresh)
            extras.append(("eye", c + d))
            target.append(d)
        else:
            seen.add(c)
            target.append(c)
    present = set(out).union(*(terms[j] for j in range(len(terms)) if j != i))
    extras += [("ones", c) for c in sorted(seen - present)]
    return "".join(target), extras


def _full(x, term, sizes):
    """``x`` broadcast to the full size of each of its letters."""
    shape = tuple(sizes[c] for c in term)
    return x if tuple(x.shape) == shape else F().broadcast(x, shape)


def _constant_operand(kind, letters, sizes):
    n = sizes[letters[0]]
    return constant(np.eye(n, dtype=np.float32) if kind == "eye"
                    else np.ones(n, dtype=np.float32))


def _einsum_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes, equation=""):
    from .._spec import SPECS
    from .._spec.array_extra import parse_einsum
    shapes = [tuple(s) for s in input_shapes]
    terms, out, sizes = parse_einsum(SPECS["Einsum"], equation, shapes)
    dy = F().reshape(grad_outputs[0], tuple(sizes[c] for c in out))
    grads = []
    for i, shape in enumerate(shapes):
        target, extras = gradient_plan(terms, out, i)
        operands, subscripts = [dy], [out]
        for j, (x, term) in enumerate(zip(inputs, terms)):
            if j != i:
                operands.append(_full(x, term, sizes))
                subscripts.append(term)
        for kind, letters in extras:
            operands.append(_constant_operand(kind, letters, sizes))
            subscripts.append(letters)
        g = F().einsum(*operands, equation=",".join(subscripts) + "->" + target)
        grads.append(F().reshape(reduce_to(g, shape), shape))
    return grads


BACKWARDS = {"Einsum": _einsum_backward}
