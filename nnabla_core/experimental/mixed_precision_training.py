"""Mixed-precision training helpers (``nnabla.experimental.mixed_precision_training``).

Half-precision gradients underflow when small; dynamic loss scaling multiplies the loss
by ``scale`` before backward, divides the gradients by it before the update, halves
(``/= scaling_factor``) the scale and retries when a gradient is inf or NaN, and grows it
after ``N`` clean updates.
"""
from __future__ import annotations

__all__ = ["DynamicLossScalingUpdater"]


def _identity(x=None):
    """The default data feeder: feeds nothing (nnabla's ``lambda x: x`` could not be
    called without an argument)."""
    return x


class DynamicLossScalingUpdater:
    """Runs one training step with dynamic loss scaling (:meth:`update`).

    Args:
        solver (nnabla.solvers.Solver): the solver, with its parameters set.
        loss (nnabla.Variable): the loss to minimise.
        data_feeder (callable): called with no argument before each forward to fill the
            inputs.
        scale (float): the initial loss scale.
        scaling_factor (float): the scale is divided by it on overflow and multiplied by
            it after ``N`` clean updates.
        N (int): clean updates before the scale grows.
        clear_buffer (bool): free intermediate buffers during forward/backward.
        accum_grad (int): forward/backward passes accumulated per update.
        weight_decay (float, optional): applied through ``solver.weight_decay``.
        comm (nnabla.communicators.Communicator, optional): all-reduces ``grads``.
        grads (list of nnabla.NdArray): gradients to all-reduce.

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.functions as F
        >>> import nnabla.parametric_functions as PF, nnabla.solvers as S
        >>> from nnabla.experimental.mixed_precision_training import (
        ...     DynamicLossScalingUpdater)
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.ones((4, 3)))
        >>> loss = F.mean(PF.affine(x, 1) ** 2)
        >>> solver = S.Sgd(0.1)
        >>> solver.set_parameters(nn.get_parameters())
        >>> updater = DynamicLossScalingUpdater(solver, loss, scale=2.0 ** 200)
        >>> updater.update()            # the scale overflows float32: it is reduced
        >>> updater.scale < 2.0 ** 200
        True
    """

    def __init__(self, solver, loss, data_feeder=_identity, scale=8.0, scaling_factor=2.0,
                 N=2000, clear_buffer=True, accum_grad=1, weight_decay=None, comm=None,
                 grads=[]):
        self.solver = solver
        self.loss = loss
        self.data_feeder = data_feeder
        self.scale = scale
        self.scaling_factor = scaling_factor
        self.N = N
        self.clear_buffer = clear_buffer
        self.accum_grad = accum_grad
        self.weight_decay = weight_decay
        self.comm = comm
        self.grads = grads
        self._counter = 0
        self._recursive_count = 0
        self._max_recursive_count = 100

    def _scaled_gradients(self):
        self.solver.zero_grad()
        for _ in range(self.accum_grad):
            self.data_feeder()
            self.loss.forward(clear_no_need_grad=self.clear_buffer)
            self.loss.backward(self.scale, clear_buffer=self.clear_buffer)
        if self.comm and len(self.grads) != 0:
            self.comm.all_reduce(self.grads, division=False, inplace=False)

    def update(self):
        """One update: zero_grad, feed, forward, backward with the scale, all-reduce,
        then (when no gradient is inf/NaN) unscale, weight decay and ``solver.update``.
        On inf/NaN the scale is reduced and the step retried, up to 100 times (then the
        step is skipped)."""
        for _ in range(self._max_recursive_count + 1):
            self._scaled_gradients()
            if not self.solver.check_inf_or_nan_grad():
                break
            self.scale /= self.scaling_factor
            self._counter = 0
        else:
            return
        self.solver.scale_grad(1.0 / self.scale)
        if self.weight_decay is not None:
            self.solver.weight_decay(self.weight_decay)
        self.solver.update()
        if self._counter > self.N:
            self.scale *= self.scaling_factor
            self._counter = 0
        self._counter += 1
