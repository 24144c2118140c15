"""``F.spectral_norm`` and ``F.sync_batch_normalization``: nnabla's Python-level signatures."""
from __future__ import annotations

from nnabla._adapters.normalization import _check_running, _constant, _list
from nnabla._dispatch import call_function
from nnabla._spec.args import adapter_args

__all__ = ["spectral_norm", "sync_batch_normalization"]


def spectral_norm(w, u, dim=0, itr=1, eps=1e-12, test=False, output_u=False):
    """Spectral normalization: ``w / sigma(w)``.

    ``sigma`` comes from ``itr`` power iterations started at ``u`` on ``w`` with
    axis ``dim`` moved first and the rest flattened: ``v = W^T u / |W^T u|``,
    ``u = W v / |W v|``, ``sigma = u^T W v``. Unless ``test``, ``u`` is updated in
    place. The gradient treats u and v as constants.

    Args:
        w (~nnabla.Variable): weights.
        u (~nnabla.Variable): (w.shape[dim],) power-iteration vector.
        dim (int), itr (int), eps (float), test (bool): see above.
        output_u (bool): also return the vector u as it was before this forward.

    Returns:
        ~nnabla.Variable, or ``(w_sn, u)`` with ``output_u``.

    >>> import numpy as np, nnabla as nn, nnabla.functions as F
    >>> w = nn.NdArray.from_numpy_array(np.diag([3., 1.]).astype(np.float32))
    >>> u = nn.NdArray.from_numpy_array(np.array([1., 0.], np.float32))
    >>> np.round(F.spectral_norm(w, u).data.astype(np.float64), 4).tolist()
    [[1.0, 0.0], [0.0, 0.3333]]
    """
    return call_function("SpectralNorm", w, u, dim=dim, itr=itr, eps=eps, test=test,
                         output_u=output_u, n_outputs=2 if output_u else 1)


def sync_batch_normalization(x, beta, gamma, mean, variance, comm, group='world',
                             axes=[1],  # noqa: B006 - nnabla's default
                             decay_rate=0.9, eps=1e-05, batch_stat=True, output_stat=False,
                             n_outputs=None):
    """Batch normalization with the batch statistics of every process of ``comm``.

    Arguments as :func:`batch_normalization`, plus the communicator ``comm`` and its
    ``group``. Within one process this is batch normalization. beta, gamma, mean and
    variance given as None act as 0, 1, 0 and 1 (the running statistics are then
    not kept).

    Returns:
        ~nnabla.Variable, or ``(y, batch_mean, batch_var)`` with ``output_stat``.

    Raises:
        ValueError: if ``batch_stat`` is False and the running statistics are None.
    """
    api = "F.sync_batch_normalization"
    _check_running(api, mean, variance, batch_stat)
    axes = adapter_args("sync_batch_normalization", axes=_list(axes))
    shape = tuple(s if i in [a % len(x.shape) for a in axes] else 1
                  for i, s in enumerate(x.shape))
    beta = _constant(x, shape, 0.0) if beta is None else beta
    gamma = _constant(x, shape, 1.0) if gamma is None else gamma
    mean = _constant(x, shape, 0.0) if mean is None else mean
    variance = _constant(x, shape, 1.0) if variance is None else variance
    return call_function("SyncBatchNormalization", x, beta, gamma, mean, variance, comm=comm,
                         group=group, axes=axes, decay_rate=decay_rate, eps=eps,
                         batch_stat=batch_stat, n_outputs=3 if output_stat else 1)
