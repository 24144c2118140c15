"""The "Mixed Precision Training" guide (nnabla-python-docs.txt, from line 2075) on the CPU's
``half`` type config: loss scaling, dynamic loss scaling and the guide's updater class."""
import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.ext_utils import get_extension_context



def build_half_classifier():
    ctx = get_extension_context("cpu", type_config="half")  # the guide's "cudnn"
    nn.set_default_context(ctx)
    x, t = nn.Variable((16, 3)), nn.Variable((16, 1))
    x.d = np.random.randn(16, 3)
    t.d = (x.d[:, :1] > 0).astype(int)
    h = F.tanh(PF.affine(x, 8, name="fc1"))
    loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 2, name="fc2"), t))
    solver = S.Momentum(0.1)
    solver.set_parameters(nn.get_parameters())
    return x, t, loss, solver


def test_loss_scaling_multiplies_gradients_and_scale_grad_undoes_it():
    x, t, loss, solver = build_half_classifier()
    loss.forward()
    solver.zero_grad()
    loss.backward()
    plain = {k: v.g.copy() for k, v in nn.get_parameters().items()}
    solver.zero_grad()
    loss_scale = 8
    loss.backward(loss_scale)
    for k, v in nn.get_parameters().items():
        np.testing.assert_allclose(v.g, 8 * plain[k], rtol=1e-2, atol=1e-3)
    solver.scale_grad(1. / loss_scale)  # do some gradient clipping, etc. after this
    for k, v in nn.get_parameters().items():
        np.testing.assert_allclose(v.g, plain[k], rtol=1e-2, atol=1e-4)
    solver.update()


class DynamicLossScalingUpdater(object):
    """The guide's all-in-one updater (docstring and communicator branch left out)."""

    def __init__(self, solver, loss, data_feeder=lambda x: x,
                 scale=8.0, scaling_factor=2.0, N=2000, clear_buffer=True,
                 accum_grad=1, weight_decay=None):
        self.solver, self.loss, self.data_feeder = solver, loss, data_feeder
        self.scale, self.scaling_factor, self.N = scale, scaling_factor, N
        self.clear_buffer, self.accum_grad = clear_buffer, accum_grad
        self.weight_decay = weight_decay
        self._counter = 0
        self._recursive_count = 0
        self._max_recursive_count = 100

    def update(self):
        self.solver.zero_grad()
        for _ in range(self.accum_grad):
            self.data_feeder()
            self.loss.forward(clear_no_need_grad=self.clear_buffer)
            self.loss.backward(self.scale, clear_buffer=self.clear_buffer)
        if self.solver.check_inf_or_nan_grad():
            self.scale /= self.scaling_factor
            self._counter = 0
            self._recursive_count += 1
            if self._recursive_count > self._max_recursive_count:
                self._recursive_count = 0
                return  # skip
            return self.update()
        self._recursive_count = 0
        self.solver.scale_grad(1. / self.scale)
        if self.weight_decay is not None:
            self.solver.weight_decay(self.weight_decay)
        self.solver.update()
        if self._counter > self.N:
            self.scale *= self.scaling_factor
            self._counter = 0
        self._counter += 1


def test_dynamic_loss_scaling_halves_an_overflowing_scale_and_trains():
    x, t, loss, solver = build_half_classifier()
    # The guide's default feeder `lambda x: x` cannot be called without an argument.
    updater = DynamicLossScalingUpdater(solver, loss, lambda: None, scale=2.0 ** 40, N=3)
    loss.forward()
    first = float(loss.d)
    for itr in range(30):
        updater.update()
    assert updater.scale < 2.0 ** 40 and np.log2(updater.scale) == int(np.log2(updater.scale))
    assert all(np.all(np.isfinite(p.d)) for p in nn.get_parameters().values())
    loss.forward()
    assert float(loss.d) < first


def test_the_updater_ships_in_nnabla_experimental():
    from nnabla.experimental.mixed_precision_training import DynamicLossScalingUpdater as Shipped
    x, t, loss, solver = build_half_classifier()
    updater = Shipped(solver, loss, lambda: None, scale=8.0)
    updater.update()
    assert updater.scale == 8.0
