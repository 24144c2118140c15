""""Static vs Dynamic Neural Networks in NNabla" (tutorial-static-vs-dynamic.txt) on the CPU.

The tutorial invites reducing ``batch_size`` to fit the device; here it is 4, over the first 8
digits, for 2 epochs instead of 30, so that its unnecessarily deep CNN trains in seconds.
"""
import numpy as np
import pytest
from sklearn.utils import Bunch

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
from nnabla.ext_utils import get_extension_context

from tiny_digits import data_iterator_tiny_digits

batch_size = 4  # Reduce to fit your device memory


def cnn(x):
    """Unnecessarily Deep CNN."""
    with nn.parameter_scope("cnn"):  # Parameter scope can be nested
        with nn.parameter_scope("conv1"):
            h = F.tanh(PF.batch_normalization(
                PF.convolution(x, 64, (3, 3), pad=(1, 1))))
        for i in range(10):  # unnecessarily deep
            with nn.parameter_scope("conv{}".format(i + 2)):
                h = F.tanh(PF.batch_normalization(
                    PF.convolution(h, 128, (3, 3), pad=(1, 1))))
        with nn.parameter_scope("conv_last"):
            h = F.tanh(PF.batch_normalization(
                PF.convolution(h, 512, (3, 3), pad=(1, 1))))
            h = F.average_pooling(h, (2, 2))
        with nn.parameter_scope("fc"):
            h = F.tanh(PF.affine(h, 1024))
        with nn.parameter_scope("classifier"):
            y = PF.affine(h, 10)
    return y


@pytest.fixture
def digits8(digits):
    return Bunch(images=digits.images[:8], target=digits.target[:8])


def epoch_reports(out):
    """(epoch, mean loss, iterations) of each ``[ epoch loss itr ]`` the callback printed."""
    fields = out.replace("[", " ").split("]")[:-1]
    return [(int(e), float(m), int(i)) for e, m, i in (f.split() for f in fields)]


def make_data(digits8):
    """The tutorial's iterator and epoch-end callback (`loss` kept in a list, not a global)."""
    loss = []

    def epoch_end_callback(epoch):
        print("[", epoch, np.mean(loss), itr[0], "]", end='')
        loss.clear()

    data = data_iterator_tiny_digits(digits8, batch_size=batch_size, shuffle=True)
    data.register_epoch_end_callback(epoch_end_callback)
    itr = [0]
    return data, loss, itr


def train_static(digits8, capsys, epochs=2):
    x, t = nn.Variable((batch_size, 1, 8, 8)), nn.Variable((batch_size, 1))
    static_y = cnn(x)
    static_y.persistent = True
    static_l = F.mean(F.softmax_cross_entropy(static_y, t))
    solver = S.Adam(alpha=1e-3)
    solver.set_parameters(nn.get_parameters())
    data, loss, itr = make_data(digits8)
    for epoch in range(epochs):
        itr[0] = 0
        while data.epoch == epoch:
            x.d, t.d = data.next()
            static_l.forward(clear_no_need_grad=True)
            solver.zero_grad()
            static_l.backward(clear_buffer=True)
            solver.update()
            loss.append(static_l.d.copy())
            itr[0] += 1
    return static_y, epoch_reports(capsys.readouterr().out)


def train_dynamic(digits8, capsys, epochs=2):
    x, t = nn.Variable((batch_size, 1, 8, 8)), nn.Variable((batch_size, 1))
    nn.clear_parameters()
    solver = S.Adam(alpha=1e-3)
    solver.set_parameters(nn.get_parameters())
    data, loss, itr = make_data(digits8)
    for epoch in range(epochs):
        itr[0] = 0
        while data.epoch == epoch:
            x.d, t.d = data.next()
            with nn.auto_forward():
                dynamic_y = cnn(x)
                dynamic_l = F.mean(F.softmax_cross_entropy(dynamic_y, t))
            solver.set_parameters(nn.get_parameters(), reset=False, retain_state=True)  # this can be done dynamically  # noqa: E501
            solver.zero_grad()
            dynamic_l.backward(clear_buffer=True)
            solver.update()
            loss.append(dynamic_l.d.copy())
            itr[0] += 1
    return solver, epoch_reports(capsys.readouterr().out)


def test_static_graph_trains_epoch_by_epoch_through_the_epoch_end_callback(digits8, capsys):
    nn.set_default_context(get_extension_context('cpu', device_id=0))  # the tutorial's 'cudnn'
    static_y, reports = train_static(digits8, capsys)
    # The callback runs inside the next() that ends the epoch, before `itr += 1`.
    assert [(e, i) for e, _, i in reports] == [(0, 1), (1, 1)]
    assert all(np.isfinite(m) and m > 0 for _, m, _ in reports)
    assert static_y.d.shape == (4, 10) and np.any(static_y.d)  # persistent through clear_buffer


def test_dynamic_graph_rebuilt_every_step_trains_exactly_like_the_static_one(digits8, capsys):
    nn.seed(0)
    _, static_reports = train_static(digits8, capsys, epochs=1)
    nn.seed(0)  # the same initial parameters again
    solver, dynamic_reports = train_dynamic(digits8, capsys, epochs=1)
    assert [(e, i) for e, _, i in dynamic_reports] == [(0, 1)]
    assert dynamic_reports[0][1] == pytest.approx(static_reports[0][1], rel=1e-4)
    assert len(solver.get_states()) == len(nn.get_parameters()) == 52
