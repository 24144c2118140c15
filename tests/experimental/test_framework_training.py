"""Training with nnabla.experimental.framework against independent references: the same
steps written as a plain loop (bit-equal parameters), numpy formulas for what the evaluator
averages, and the loss of a small problem going down."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.experimental.framework import Data, Trainer, Worker
from nnabla.experimental.framework.updater import Updater
from nnabla.utils.data_iterator import data_iterator
from nnabla.utils.data_source import DataSource

BATCH, FEATURES = 8, 5


@pytest.fixture(autouse=True)
def fresh_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


TRUE_W = np.random.RandomState(99).randn(FEATURES, 1)


def regression_set(seed, n):
    x = np.random.RandomState(seed).randn(n, FEATURES).astype(np.float32)
    return x, (x @ TRUE_W + 0.5).astype(np.float32)


class ArrayData(Data):
    """Training and validation batches of fixed arrays, in order, through data_iterator."""

    class Source(DataSource):
        def __init__(self, x, t):
            super().__init__()
            self._x, self._t = x, t
            self._size, self._variables = len(x), ("x", "t")

        def _get_data(self, position):
            return self._x[position], self._t[position]

    def __data_source__(self, arrays):
        return self.Source(*arrays)

    def __data_iterator__(self, data_source):
        return data_iterator(data_source, BATCH, with_memory_cache=False, use_thread=False)

    def __init__(self, train, valid):
        self._data_source = self.__data_source__(train)
        self._data_iterator = self.__data_iterator__(self._data_source)
        self._v_data_iterator = self.__data_iterator__(self.__data_source__(valid))

    def next(self, train=True):
        return (self._data_iterator if train else self._v_data_iterator).next()


def affine_net(x, scope):
    init = I.UniformInitializer((-0.5, 0.5), rng=np.random.RandomState(0))
    with nn.parameter_scope(scope):
        return PF.affine(x, 1, w_init=init)


class RegressionWorker(Worker):
    """Momentum SGD with two accumulated passes and weight decay per update; evaluates the
    mean squared error over the validation set."""

    def __init__(self, data, max_epoch, iter_per_epoch, val_iter):
        super().__init__(data, max_epoch, iter_per_epoch)
        self._val_iter, self.losses, self.reports = val_iter, [], {}
        self._updater = Updater(
            self._train_data_feeder, self._solver_zero_grad, self._solver_update,
            loss_forward=self._loss_forward, loss_backward=self._loss_backward,
            loss_backward_callback_on_finish=lambda i, e, ag: self.losses.append(
                self._loss.d.copy()),
            solver_update_callback_on_start=lambda i, e: self._solver.weight_decay(1e-3),
            accum_grad=2)
        self._evaluator.val_iter = val_iter

    def _var_init(self):
        self._x, self._t = nn.Variable((BATCH, FEATURES)), nn.Variable((BATCH, 1))
        self._vx, self._vt = nn.Variable((BATCH, FEATURES)), nn.Variable((BATCH, 1))

    def _loss_init(self):
        self._loss = F.mean(F.squared_error(affine_net(self._x, "fw"), self._t))
        self._vloss = F.mean(F.squared_error(affine_net(self._vx, "fw"), self._vt))

    def _solver_init(self):
        self._solver = S.Momentum(0.05, 0.9)
        with nn.parameter_scope("fw"):
            self._solver.set_parameters(nn.get_parameters())

    def _train_data_feeder(self, i, e, ag):
        self._x.d, self._t.d = self._data.next()

    def _eval_callback_on_start(self, e):
        self._sum = 0.0

    def _eval_data_feeder(self, e, vi):
        self._vx.d, self._vt.d = self._data.next(train=False)

    def _eval_graph_forward(self, e, vi):
        self._vloss.forward(clear_buffer=True)
        self._sum += float(self._vloss.d)

    def _eval_callback_on_finish(self, e):
        self.reports[e] = self._sum / self._val_iter


def hand_written_training(train, steps):
    """The same training without the framework, batches sliced from the arrays."""
    x, t = nn.Variable((BATCH, FEATURES)), nn.Variable((BATCH, 1))
    loss = F.mean(F.squared_error(affine_net(x, "hand"), t))
    solver = S.Momentum(0.05, 0.9)
    with nn.parameter_scope("hand"):
        solver.set_parameters(nn.get_parameters())
    losses, batches = [], len(train[0]) // BATCH
    for step in range(steps):
        solver.zero_grad()
        for ag in range(2):
            k = (2 * step + ag) % batches
            x.d, t.d = train[0][k * BATCH:(k + 1) * BATCH], train[1][k * BATCH:(k + 1) * BATCH]
            loss.forward(clear_no_need_grad=True)
            loss.backward(clear_buffer=True)
            losses.append(loss.d.copy())
        solver.weight_decay(1e-3)
        solver.update()
    return losses


def test_trainer_updates_exactly_as_the_hand_written_loop():
    train, valid = regression_set(0, 6 * BATCH), regression_set(1, 3 * BATCH)
    worker = RegressionWorker(ArrayData(train, valid), max_epoch=3, iter_per_epoch=4,
                              val_iter=3)
    Trainer(worker).train()
    reference_losses = hand_written_training(train, steps=12)
    np.testing.assert_array_equal(np.array(worker.losses), np.array(reference_losses))
    for name in ("affine/W", "affine/b"):
        fw, hand = nn.get_parameters()["fw/" + name], nn.get_parameters()["hand/" + name]
        np.testing.assert_array_equal(fw.d, hand.d)


def test_the_evaluator_reports_the_validation_mean_squared_error():
    train, valid = regression_set(0, 4 * BATCH), regression_set(1, 3 * BATCH)
    worker = RegressionWorker(ArrayData(train, valid), max_epoch=2, iter_per_epoch=2,
                              val_iter=3)
    Trainer(worker).train()
    params = nn.get_parameters()
    prediction = valid[0] @ params["fw/affine/W"].d + params["fw/affine/b"].d
    # the batches are equal in size: the mean of batch means is the mean over the set
    expected = np.mean((prediction - valid[1]) ** 2)
    assert sorted(worker.reports) == [0, 1, 2]     # two epochs, then the end (max_epoch)
    np.testing.assert_allclose(worker.reports[2], expected, rtol=1e-5)
    assert worker.reports[2] < worker.reports[0]


class BlobsWorker(Worker):
    """A two-layer classifier of two Gaussian blobs, trained with Adam by the defaults."""

    def __init__(self, data, max_epoch):
        super().__init__(data, max_epoch=max_epoch, iter_per_epoch=len(data) // BATCH)
        self.losses = []

    def _var_init(self):
        self._x, self._label = nn.Variable((BATCH, 2)), nn.Variable((BATCH, 1))

    def _loss_init(self):
        init = I.NormalInitializer(0.5, rng=np.random.RandomState(3))
        h = F.tanh(PF.affine(self._x, 8, w_init=init, name="fc1"))
        self._loss = F.mean(F.softmax_cross_entropy(PF.affine(h, 2, w_init=init, name="fc2"),
                                                    self._label))

    def _solver_init(self):
        self._solver = S.Adam(0.05)
        self._solver.set_parameters(nn.get_parameters())

    def _train_data_feeder(self, i, e, ag):
        k = i % (len(self._data) // BATCH)
        self._x.d = self._data[k * BATCH:(k + 1) * BATCH, :2]
        self._label.d = self._data[k * BATCH:(k + 1) * BATCH, 2:]

    def iter_loop_end(self, i, e):
        self.losses.append(float(self._loss.d))

    def brief(self):
        return self.losses


def test_a_small_classifier_trained_by_the_framework_learns():
    rng = np.random.RandomState(7)
    labels = rng.randint(0, 2, size=(64, 1))
    points = rng.randn(64, 2) * 0.7 + np.where(labels == 1, 1.5, -1.5)
    trainer = Trainer(BlobsWorker(np.hstack([points, labels]).astype(np.float32), max_epoch=5))
    trainer.train()
    losses = trainer.brief()
    assert len(losses) == 5 * 8
    assert np.mean(losses[-8:]) < 0.2 * np.mean(losses[:8])
