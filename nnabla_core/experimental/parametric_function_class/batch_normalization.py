"""Batch normalization as classes
(``nnabla.experimental.parametric_function_class.batch_normalization``)."""
from __future__ import annotations

from ... import functions as F
from ...initializer import ConstantInitializer
from .module import Module, _new_parameter

__all__ = ["BatchNormalization", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d"]


class BatchNormalization(Module):
    """Batch normalization holding ``beta``, ``gamma`` and the running ``mean``, ``var``
    (see :func:`nnabla.parametric_functions.batch_normalization`).

    Args:
        n_features (int): size of the normalized axis.
        n_dims (int): number of dimensions of the input.
        axes (list of int): the normalized axis (one).
        decay_rate (float): decay of the running statistics.
        eps (float): added to the variance.
        batch_stat (bool): normalize with the batch's statistics (and update the running
            ones); ``False`` uses the running statistics. ``__call__(x, test=True)`` uses the
            running statistics in any case.
        output_stat (bool): also return the batch mean and variance.
        fix_parameters (bool): ``beta`` and ``gamma`` get ``need_grad=False``.
        param_init (dict, optional): initializers or arrays for ``'beta'``, ``'gamma'``,
            ``'mean'``, ``'var'`` (defaults 0, 1, 0, 1).

    Attributes:
        beta, gamma, mean, var (nnabla.Variable): shape 1 except ``n_features`` on the
            normalized axis; ``mean`` and ``var`` never need gradients.
    """

    def __init__(self, n_features, n_dims, axes=[1], decay_rate=0.9, eps=1e-5,
                 batch_stat=True, output_stat=False, fix_parameters=False, param_init=None):
        if len(axes) != 1:
            raise ValueError(f"BatchNormalization: axes must have one axis; given {axes}")
        if not -n_dims <= axes[0] < n_dims:
            raise ValueError(f"BatchNormalization: axis {axes[0]} is out of range for "
                             f"n_dims={n_dims}")
        shape = [1] * n_dims
        shape[axes[0]] = n_features
        param_init = {} if param_init is None else param_init
        unknown = set(param_init) - {"beta", "gamma", "mean", "var"}
        if unknown:
            raise ValueError(f"BatchNormalization: param_init keys must be 'beta', 'gamma', "
                             f"'mean' or 'var'; given {sorted(unknown)}")
        defaults = {"beta": 0, "gamma": 1, "mean": 0, "var": 1}
        inits = {k: param_init.get(k, ConstantInitializer(v)) for k, v in defaults.items()}
        self.beta = _new_parameter(inits["beta"], shape, not fix_parameters,
                                   "BatchNormalization")
        self.gamma = _new_parameter(inits["gamma"], shape, not fix_parameters,
                                    "BatchNormalization")
        self.mean = _new_parameter(inits["mean"], shape, False, "BatchNormalization")
        self.var = _new_parameter(inits["var"], shape, False, "BatchNormalization")
        self.axes = list(axes)
        self.decay_rate = decay_rate
        self.eps = eps
        self.batch_stat = batch_stat
        self.output_stat = output_stat

    def __call__(self, inp, test=False):
        """Normalize ``inp``; ``test=True`` uses the running statistics."""
        return F.batch_normalization(inp, self.beta, self.gamma, self.mean, self.var,
                                     self.axes, self.decay_rate, self.eps,
                                     self.batch_stat and not test, self.output_stat)


class BatchNorm1d(BatchNormalization):
    """:class:`BatchNormalization` of 3-D inputs ``(N, C, L)`` (with ``Conv1d``)."""

    def __init__(self, n_features, axes=[1], decay_rate=0.9, eps=1e-5, batch_stat=True,
                 output_stat=False, fix_parameters=False, param_init=None):
        super().__init__(n_features, 3, axes=axes, decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, output_stat=output_stat,
                         fix_parameters=fix_parameters, param_init=param_init)


class BatchNorm2d(BatchNormalization):
    """:class:`BatchNormalization` of 4-D inputs ``(N, C, H, W)`` (with ``Conv2d``)."""

    def __init__(self, n_features, axes=[1], decay_rate=0.9, eps=1e-5, batch_stat=True,
                 output_stat=False, fix_parameters=False, param_init=None):
        super().__init__(n_features, 4, axes=axes, decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, output_stat=output_stat,
                         fix_parameters=fix_parameters, param_init=param_init)


class BatchNorm3d(BatchNormalization):
    """:class:`BatchNormalization` of 5-D inputs ``(N, C, D, H, W)`` (with ``Conv3d``)."""

    def __init__(self, n_features, axes=[1], decay_rate=0.9, eps=1e-5, batch_stat=True,
                 output_stat=False, fix_parameters=False, param_init=None):
        super().__init__(n_features, 5, axes=axes, decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, output_stat=output_stat,
                         fix_parameters=fix_parameters, param_init=param_init)
