"""nnabla's ``FusedBatchNormalizationBackward``: the gradient of
``relu(batch_normalization(x) + z)`` as a function.

``FusedBatchNormalizationBackward(ctx, axes, decay_rate, eps, batch_stat, nonlinearity)``
maps ``(dy, x, beta, gamma, mean, variance, y[, z])`` to ``(dx, dbeta, dgamma[, dz])``;
set ``is_add`` when ``z`` is given. ``y`` is the fused function's output: the
nonlinearity's mask ``y > 0`` is read from it, in the forward (the fused kernel's
own backward) and in the graph backward alike. The graph backward, registered
under the class name, differentiates ``du = dy * (y > 0)`` followed by batch
normalization's first-order gradient graph (see :mod:`.batch_normalization`);
``dz = du`` does not depend on ``z``.
"""
from __future__ import annotations


from .. import _execute
from ._grad_function import GradFunction, copy_of_data, data, kernel_for, store
from ._util import F
from .batch_normalization import differentiate, first_order


def _masked(dy, y, nonlinearity):
    """``dy`` through the nonlinearity's derivative, read from the output ``y``."""
    if nonlinearity == "relu":
        return dy * F().greater_scalar(y, 0).apply(need_grad=False)
    return dy


class FusedBatchNormalizationBackward(GradFunction):
    """``(dx, dbeta, dgamma[, dz])`` of ``F.fused_batch_normalization`` from
    ``(dy, x, beta, gamma, mean, variance, y[, z])``.

    Args:
        ctx (Context): the context.
        axes, decay_rate, eps, batch_stat, nonlinearity: as
            ``F.fused_batch_normalization``'s.

    Attributes:
        is_add (bool): whether ``z`` is given (set before calling it).
    """

    def __init__(self, ctx, axes=(), decay_rate=0.9, eps=1e-05, batch_stat=True,
                 nonlinearity="relu"):
        if nonlinearity not in ("", "relu"):
            raise ValueError(f"{type(self).__name__}: argument 'nonlinearity' is "
                             f"{nonlinearity!r}; expected 'relu' or ''")
        super().__init__(ctx, axes=list(axes), decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, nonlinearity=nonlinearity)
        self.is_add = False

    def min_inputs(self):
        return 7

    def min_outputs(self):
        return 4 if self.is_add else 3

    def setup_impl(self, inputs, outputs):
        expected = 8 if self.is_add else 7
        if len(inputs) != expected:
            raise ValueError(f"{self.name}: {len(inputs)} inputs given; expected {expected} "
                             "(dy, x, beta, gamma, mean, variance, y" +
                             (", z)" if self.is_add else ") (set is_add for z)"))
        targets = list(inputs[1:4]) + list(inputs[7:])
        for out, v in zip(outputs, targets):
            out.reset_shape(tuple(v.shape), True)

    def forward_impl(self, inputs, outputs):
        fwd = list(inputs[1:6]) + list(inputs[7:])
        shapes = [tuple(v.shape) for v in fwd]
        # The spec admits only relu; the kernel of '' would be the batch normalization one.
        type_name = "FusedBatchNormalization" if self._args["nonlinearity"] == "relu" \
            else "BatchNormalization"
        args = dict(self._args)
        if type_name == "BatchNormalization":
            args.pop("nonlinearity")
            shapes = shapes[:5]
        call, out_shapes = kernel_for(type_name, shapes, args, self.ctx)
        # Copies: the kernel's forward updates the running statistics in place.
        xs = [copy_of_data(v, call) for v in fwd[:len(shapes)]]
        if self._args["batch_stat"]:
            call.kernel.forward(xs)
        dy = data(inputs[0], call)
        dys = [dy] + [_execute.zeros(call.family, s) for s in out_shapes[1:]]
        ys = [data(inputs[6], call)] + [None] * (len(out_shapes) - 1)
        propagate_down = [True, True, True, False, False] + [True] * (len(shapes) - 5)
        grads = _execute.backward(call, xs, ys, dys, propagate_down)
        if type_name == "BatchNormalization" and self.is_add:
            grads = list(grads[:5]) + [call.family.copy(dy)]
        for out, i in zip(outputs, [0, 1, 2, 5]):
            store(call, out, grads[i])


def _fused_batch_normalization_backward(grad_outputs, inputs, input_shapes, outputs,
                                        output_shapes, axes=(1,), decay_rate=0.9, eps=1e-05,
                                        batch_stat=True, nonlinearity="relu"):
    dy, x, beta, gamma, mean, variance, y = inputs[:7]
    du = _masked(dy, y, nonlinearity)
    first = first_order(du, x, beta, gamma, mean, variance, axes, eps, batch_stat)
    if len(inputs) > 7 and inputs[7] is not None:
        first.append(du)
    return differentiate(first, grad_outputs, inputs)


BACKWARDS = {"FusedBatchNormalizationBackward": _fused_batch_normalization_backward}
