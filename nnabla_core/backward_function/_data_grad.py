"""Data-gradient functions of linear array maps, as nnabla's ``backward_function`` exposes them.

nnabla publishes classes such as ``nnabla.backward_function.pad.PadDataGrad``:
a function whose input is ``dy`` and whose output is ``dx`` of a linear map
``y = A x``. Its forward is the transpose ``dx = A^T dy``; its backward is the
map itself, ``g_dy = A g_dx``. Our own backward functions are built from
``nnabla.functions`` and do not need these classes; they exist for code (and
tests) that construct them by name. Construct one with the map's arguments,
set ``xshape`` (``xshapes`` for several x), then call it on ``dy``.
"""
from __future__ import annotations

import numpy as np

from ..function import PythonFunction


class LinearMapDataGrad(PythonFunction):
    """Base of the data gradients of linear maps of one input.

    Subclasses implement ``apply(x)`` (the map, on numpy arrays) and
    ``transpose(dy)`` (its transpose), both using ``self.xshape`` and the arguments.

    Args:
        ctx (Context): the context (as nnabla's classes take it).
        **args: the arguments of the forward function, returned by ``args``.
    """

    def __init__(self, ctx, **args):
        super().__init__(ctx)
        self._args = args
        self._xshape = None

    @property
    def name(self):
        return type(self).__name__

    @property
    def args(self):
        return dict(self._args)

    @property
    def xshape(self):
        """The shape of the forward function's input (the shape of ``dx``)."""
        return self._xshape

    @xshape.setter
    def xshape(self, shape):
        self._xshape = tuple(shape)

    def min_inputs(self):
        return 1

    def min_outputs(self):
        return 1

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return False

    def out_shapes(self):
        return [self.xshape]

    def setup_impl(self, inputs, outputs):
        if self._xshape is None:
            raise ValueError(f"{self.name}: set 'xshape' (the forward input's shape) before "
                             "calling it")
        for out, shape in zip(outputs, self.out_shapes()):
            out.reset_shape(shape, True)

    def forward_impl(self, inputs, outputs):
        dxs = self.transpose(np.asarray(inputs[0].d, dtype=np.float32))
        for out, dx in zip(outputs, dxs if isinstance(dxs, list) else [dxs]):
            out.d = dx

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        if not propagate_down[0]:
            return
        gdxs = [np.asarray(o.g, dtype=np.float32) for o in outputs]
        g = self.apply(gdxs if len(gdxs) > 1 else gdxs[0])
        inputs[0].g = inputs[0].g + g if accum[0] else g

    def backward(self, inputs, outputs, accum=None):
        """nnabla's explicit backward call: ``dy`` += or = the map of ``dx``'s grad."""
        accum = [False] * len(inputs) if accum is None else list(accum)
        self.backward_impl(inputs, outputs, [v.need_grad for v in inputs], accum)

    def apply(self, x):
        raise NotImplementedError

    def transpose(self, dy):
        raise NotImplementedError
