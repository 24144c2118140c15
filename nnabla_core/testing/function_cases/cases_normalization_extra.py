"""Cases of spectral normalization and synchronized batch normalization (one process).

SpectralNorm's gradient holds the power-iteration vectors constant (as nnabla), so it
is not the numerical gradient: it has ``grad=False`` here and its own tests in
``test_normalization_extra.py``.
"""
import numpy as np
from .case import Case, Normal, Positive


def ref_spectral_norm(w, u, dim=0, itr=1, eps=1e-12, test=False, output_u=False):
    moved = np.moveaxis(w, dim, 0)
    mat = moved.reshape(moved.shape[0], -1)
    u0 = u
    for _ in range(itr):
        v = mat.T @ u
        v = v / np.sqrt(np.sum(v ** 2) + eps)
        u = mat @ v
        u = u / np.sqrt(np.sum(u ** 2) + eps)
    sigma = u @ mat @ v
    w_sn = w / sigma
    return (w_sn, u0) if output_u else w_sn


def ref_sync_bn(x, beta, gamma, mean, variance, comm=None, group="world", axes=(1,),
                decay_rate=0.9, eps=1e-5, batch_stat=True):
    reduce = tuple(i for i in range(x.ndim) if i not in [a % x.ndim for a in axes])
    if batch_stat:
        mean = x.mean(axis=reduce, keepdims=True)
        variance = x.var(axis=reduce, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * gamma + beta


X4, C1 = (4, 3, 2, 2), (1, 3, 1, 1)
BN_IN = [Normal(X4, 2.0, 0.5), Normal(C1), Normal(C1, 0.3, 1.0), Normal(C1), Positive(C1)]

CASES = [
    Case("SpectralNorm", [Normal((8, 4, 3)), Normal((8,))], {}, ref=ref_spectral_norm,
         grad=False),
    Case("SpectralNorm", [Normal((6, 5)), Normal((5,))], {"dim": 1, "itr": 3},
         ref=ref_spectral_norm, grad=False, id="dim1-itr3"),
    Case("SpectralNorm", [Normal((4, 3, 5)), Normal((5,))],
         {"dim": 2, "itr": 2, "test": True, "output_u": True}, ref=ref_spectral_norm,
         grad=False, id="test-output-u"),
    Case("SyncBatchNormalization", BN_IN, {"comm": None}, ref=ref_sync_bn,
         grad_inputs=(0, 1, 2)),
    Case("SyncBatchNormalization", BN_IN, {"comm": None, "batch_stat": False},
         ref=ref_sync_bn, grad_inputs=(0, 1, 2), id="running"),
    Case("SyncBatchNormalization", [Normal((3, 2, 4)), Normal((1, 1, 4)), Normal((1, 1, 4)),
                                    Normal((1, 1, 4)), Positive((1, 1, 4))],
         {"comm": None, "axes": [-1]}, ref=ref_sync_bn, grad_inputs=(0, 1, 2),
         id="last-axis"),
]
