"""nnabla's ``BatchNormalizationBackward``: batch normalization's gradient as a function.

``BatchNormalizationBackward(ctx, axes, decay_rate, eps, batch_stat, no_scale, no_bias)``
maps ``(dy, x, [beta], [gamma], mean, variance)`` to ``(dx, [dbeta], [dgamma])``, the
present parameters following ``no_bias`` / ``no_scale``. Its forward runs the
batch-normalization kernel's own backward (on copies of the running statistics,
which a gradient must not update). Its graph backward, registered under its name,
differentiates the first-order gradient graph: ``(dx, dbeta, dgamma)`` are built as
``nn.grad`` of batch normalization's composition (:func:`.normalization.batch_norm`)
with ``dy`` as a graph input, and ``nn.grad`` of those gives the second-order terms.
Everything is ``nnabla.functions``, so any order is available.
"""
from __future__ import annotations


from ._composite import expand
from .. import _execute
from ._grad_function import GradFunction, copy_of_data, data, kernel_for, store
from .normalization import batch_norm


def is_gradient_of(g, y):
    """Whether ``g`` is a gradient for ``y`` (nn.grad passes a 0-d zero for unreached outputs)."""
    return g is not None and tuple(g.shape) == tuple(y.shape)


def differentiate(first, grad_outputs, inputs):
    """``nn.grad`` of the first-order gradients ``first`` w.r.t. every ``inputs`` entry
    that needs a gradient, with ``grad_outputs`` (one per entry of ``first``).

    Returns:
        list: one Variable or None per entry of ``inputs``.
    """
    import nnabla as nn
    pairs = [(y, g) for y, g in zip(first, grad_outputs)
             if y is not None and is_gradient_of(g, y)]
    wrt = [i for i, v in enumerate(inputs) if v is not None and v.need_grad]
    grads = [None] * len(inputs)
    if pairs and wrt:
        found = nn.grad([y for y, _ in pairs], [inputs[i] for i in wrt],
                        grad_outputs=[g for _, g in pairs])
        for i, g in zip(wrt, found):
            grads[i] = g
    return grads


def first_order(dy, x, beta, gamma, mean, variance, axes, eps, batch_stat):
    """``(dx, dbeta, dgamma)`` of batch normalization as a graph of ``dy`` and the inputs.

    Absent parameters (None) get None.
    """
    import nnabla as nn
    y, _, _ = batch_norm(x, beta, gamma, mean, variance, axes, eps, batch_stat)
    params = [x, beta, gamma]
    present = [v for v in params if v is not None]
    found = iter(nn.grad([y], present, grad_outputs=[dy]))
    return [None if v is None else next(found) for v in params]


def _param_layout(no_scale, no_bias):
    return [True, not no_bias, not no_scale, True, True]


class BatchNormalizationBackward(GradFunction):
    """``(dx, [dbeta], [dgamma])`` of ``F.batch_normalization`` from
    ``(dy, x, [beta], [gamma], mean, variance)``.

    Args:
        ctx (Context): the context.
        axes, decay_rate, eps, batch_stat, no_scale, no_bias: as
            ``F.batch_normalization``'s (``no_scale`` / ``no_bias`` say which of
            ``gamma`` / ``beta`` are given).

    Example:
        >>> import numpy as np, nnabla as nn
        >>> from nnabla.backward_function.batch_normalization import (
        ...     BatchNormalizationBackward)
        >>> rng = np.random.RandomState(0)
        >>> dy, x = (nn.Variable.from_numpy_array(rng.randn(4, 2)) for _ in range(2))
        >>> mean, var = nn.Variable((1, 2)), nn.Variable((1, 2))
        >>> df = BatchNormalizationBackward(nn.Context(), [1], no_scale=True, no_bias=True)
        >>> dx = df(dy, x, mean, var)
        >>> dx.forward()
        >>> bool(abs(dx.d.sum(axis=0)).max() < 1e-4)     # dx of a standardisation sums to 0
        True
    """

    def __init__(self, ctx, axes=(), decay_rate=0.9, eps=1e-05, batch_stat=True,
                 no_scale=False, no_bias=False):
        super().__init__(ctx, axes=list(axes), decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, no_scale=no_scale, no_bias=no_bias)
        self.present = _param_layout(no_scale, no_bias)

    def min_inputs(self):
        return 4

    def min_outputs(self):
        return sum(self.present[:3])

    def _forward_inputs(self, inputs):
        if len(inputs) != 1 + sum(self.present):
            raise ValueError(f"{self.name}: {len(inputs)} inputs given; expected "
                             f"{1 + sum(self.present)} (dy, x, beta, gamma, mean, variance "
                             "without those that no_bias / no_scale leave out)")
        return expand(list(inputs[1:]), self.present)

    def setup_impl(self, inputs, outputs):
        params = [v for v in self._forward_inputs(inputs)[:3] if v is not None]
        for out, v in zip(outputs, params):
            out.reset_shape(tuple(v.shape), True)

    def forward_impl(self, inputs, outputs):
        fwd = self._forward_inputs(inputs)
        shapes = [None if v is None else tuple(v.shape) for v in fwd]
        call, out_shapes = kernel_for("BatchNormalization", shapes, self._args, self.ctx)
        # Copies: the kernel's forward updates the running statistics in place.
        xs = [None if v is None else copy_of_data(v, call) for v in fwd]
        if self._args["batch_stat"]:
            call.kernel.forward(xs)
        dys = [data(inputs[0], call)]
        dys += [_execute.zeros(call.family, s) for s in out_shapes[1:]]
        propagate_down = [p and i < 3 for i, p in enumerate(self.present)]
        grads = _execute.backward(call, xs, [None] * len(out_shapes), dys, propagate_down)
        for out, g in zip(outputs, [g for g, p in zip(grads, propagate_down) if p]):
            store(call, out, g)


def _batch_normalization_backward(grad_outputs, inputs, input_shapes, outputs, output_shapes,
                                  axes=(1,), decay_rate=0.9, eps=1e-05, batch_stat=True,
                                  no_scale=False, no_bias=False):
    x, beta, gamma, mean, variance = expand(list(inputs[1:]), _param_layout(no_scale, no_bias))
    first = first_order(inputs[0], x, beta, gamma, mean, variance, axes, eps, batch_stat)
    return differentiate([g for g in first if g is not None], grad_outputs, inputs)


BACKWARDS = {"BatchNormalizationBackward": _batch_normalization_backward}
