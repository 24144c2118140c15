"""Spectral normalization's in-place u and constant-vector gradient; sync BN in one process."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _var(a, need_grad=False):
    return nn.Variable.from_numpy_array(np.asarray(a, np.float32), need_grad=need_grad)


def _power(mat, u, itr, eps=1e-12):
    for _ in range(itr):
        v = mat.T @ u
        v /= np.sqrt((v ** 2).sum() + eps)
        u = mat @ v
        u /= np.sqrt((u ** 2).sum() + eps)
    return u, v


@pytest.mark.parametrize("test", [False, True])
def test_spectral_norm_updates_u_in_place_only_when_training(test):
    rng = np.random.RandomState(0)
    w0, u0 = rng.randn(4, 3), rng.randn(4)
    u = _var(u0)
    y, u_before = F.spectral_norm(_var(w0), u, itr=2, test=test, output_u=True)
    F.sink(y, u_before).forward()
    expected = u0 if test else _power(w0, u0, 2)[0]
    np.testing.assert_allclose(u.d, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(u_before.d, u0, rtol=1e-6)


def test_spectral_norm_gradient_holds_the_singular_vectors_constant():
    rng = np.random.RandomState(1)
    w0, u0, dy = rng.randn(3, 4, 2), rng.randn(4), rng.randn(3, 4, 2)
    w = _var(w0, need_grad=True)
    y = F.spectral_norm(w, _var(u0), dim=1, itr=2)
    y.forward()
    w.grad.zero()
    y.backward(dy.astype(np.float32))
    mat = np.moveaxis(w0, 1, 0).reshape(4, -1)
    u, v = _power(mat, u0, 2)

    def objective(m):
        return float((np.moveaxis((m / (u @ m @ v)).reshape(4, 3, 2), 0, 1) * dy).sum())
    numeric = np.zeros_like(mat)
    for idx in np.ndindex(*mat.shape):
        step = np.zeros_like(mat)
        step[idx] = 1e-6
        numeric[idx] = (objective(mat + step) - objective(mat - step)) / 2e-6
    np.testing.assert_allclose(w.g, np.moveaxis(numeric.reshape(4, 3, 2), 0, 1),
                               rtol=1e-3, atol=1e-4)


def test_spectral_norm_rejects_a_u_of_the_wrong_size():
    spec = SPECS["SpectralNorm"]
    with pytest.raises(ValueError, match=r"F.spectral_norm: argument 'u'.*\(3,\)"):
        infer(spec, [(4, 3), (4,)], bind_args(spec, {"dim": 1}))


class _OneProcess:
    size = 1
    rank = 0


def test_sync_batch_normalization_in_one_process_is_batch_normalization():
    rng = np.random.RandomState(2)
    x = rng.randn(4, 3, 2).astype(np.float32)
    beta, gamma = rng.randn(1, 3, 1), rng.rand(1, 3, 1) + 0.5
    stats = [(_var(np.zeros((1, 3, 1))), _var(np.ones((1, 3, 1)))) for _ in range(2)]
    y0, m0, v0 = F.sync_batch_normalization(_var(x), _var(beta), _var(gamma), *stats[0],
                                            _OneProcess(), output_stat=True)
    y1, m1, v1 = F.batch_normalization(_var(x), _var(beta), _var(gamma), *stats[1],
                                       output_stat=True)
    F.sink(y0, m0, v0, y1, m1, v1).forward()
    for a, b in ((y0, y1), (m0, m1), (v0, v1), (stats[0][0], stats[1][0]),
                 (stats[0][1], stats[1][1])):
        np.testing.assert_allclose(a.d, b.d, rtol=1e-6, atol=1e-6)


def test_sync_batch_normalization_accepts_none_parameters_and_checks_running_stats():
    x = _var(np.arange(6).reshape(3, 2))
    y = F.sync_batch_normalization(x, None, None, None, None, None, eps=0.0)
    y.forward()
    np.testing.assert_allclose(y.d[:, 0], [-1.2247449, 0., 1.2247449], rtol=1e-5)
    with pytest.raises(ValueError, match="F.sync_batch_normalization.*batch_stat=False"):
        F.sync_batch_normalization(x, None, None, None, None, None, batch_stat=False)
