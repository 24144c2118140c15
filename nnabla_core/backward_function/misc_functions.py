"""Backward functions of the special-use functions: bc_add2, vat_noise, unlink and sink.

nnabla raises for all four; ours give what the engine's backward gives:

- ``BcAdd2``: ``dy`` to both inputs, summed over the axes each one was broadcast along.
- ``VATNoise``: no gradient. (The engine's backward stores ``eps * dy`` into ``w``'s
  data, nnabla's trick for virtual adversarial training; a gradient graph has no such
  side effect, and the gradient itself is zero.)
- ``Unlink``: no gradient (it cuts the graph).
- ``Sink``: ones for every input with ``one_input_grad`` (whatever ``dy`` is), else none.
"""
from __future__ import annotations

import numpy as np

from ._shaping import constant
from ._util import reduce_to


def bc_add2_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                     inplace=False):
    """dx0 = dy and dx1 = dy, each reduced to its input's shape."""
    dy = grad_outputs[0]
    return [reduce_to(dy, input_shapes[0]), reduce_to(dy, input_shapes[1])]


def vat_noise_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                       base_axis=1, eps=1.0):
    """No gradient flows to ``x`` or ``w``."""
    return [None, None]


def unlink_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes):
    """No gradient flows through ``unlink``."""
    return [None]


def sink_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                  one_input_grad=True):
    """Ones of each input's shape (constants, independent of ``dy``), or no gradient."""
    if not one_input_grad:
        return [None] * len(input_shapes)
    return [None if shape is None else constant(np.ones(shape, dtype=np.float32))
            for shape in input_shapes]


BACKWARDS = {"BcAdd2": bc_add2_backward, "VATNoise": vat_noise_backward,
             "Unlink": unlink_backward, "Sink": sink_backward}
