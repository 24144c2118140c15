"""PF.fused_batch_normalization: nnabla's function node and batch statistics (numpy)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.parametric_functions as PF


@pytest.mark.parametrize("with_z", [False, True])
def test_fused_batch_normalization_with_output_stat_returns_the_batch_statistics(with_z):
    rng = np.random.RandomState(0)
    xv = rng.randn(8, 4).astype(np.float32)
    zv = rng.randn(8, 4).astype(np.float32)
    nn.clear_parameters()
    try:
        x = nn.Variable.from_numpy_array(xv)
        z = nn.Variable.from_numpy_array(zv) if with_z else None
        y, mean, var = PF.fused_batch_normalization(x, z, output_stat=True)
        f = y.parent
        assert f.info.type_name == "FusedBatchNormalization"
        assert len(f.inputs) == (6 if with_z else 5)
        _, beta, gamma, running_mean, running_var = f.inputs[:5]
        assert beta.need_grad and gamma.need_grad and not running_mean.need_grad
        y.forward()
        np.testing.assert_allclose(mean.d.ravel(), xv.mean(0), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(var.d.ravel(), xv.var(0), rtol=1e-5, atol=1e-6)
        want = (xv - xv.mean(0)) / np.sqrt(xv.var(0) + 1e-5) + (zv if with_z else 0)
        np.testing.assert_allclose(y.d, np.maximum(want, 0), rtol=1e-4, atol=1e-5)
    finally:
        nn.clear_parameters()
