"""The core is device-neutral: the ``boxed`` test backend, whose arrays are not numpy and
refuse numpy conversion, trains the tutorials' networks with no host transfer.

``boxed`` (tests/plugins/nnabla_ext_toy) runs the CPU plugin's kernels and solver rules on
the values inside its boxes, so every figure must equal the CPU's bit for bit, and its
family counts every host <-> device transfer.
"""
import pathlib
import re

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S
import nnabla_ext.boxed as boxed   # installed by the nox tests session
from nnabla.ext_utils import get_extension_context

SOLVERS = ["Sgd", "SgdW", "Momentum", "Lars", "Nesterov", "Adadelta", "Adagrad", "AdaBelief",
           "RMSprop", "RMSpropGraves", "Adam", "AdamW", "AdaBound", "Adamax", "AMSGRAD",
           "AMSBound", "Lamb", "Lion"]


def _mlp(x):
    h = F.relu(PF.affine(x, 16, name="l1"))
    h = F.relu(PF.affine(h, 32, name="l2"))
    return PF.affine(h, 10, name="l3")


def _cnn(x):
    h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1")
    h = F.relu(PF.batch_normalization(h, name="bn1"))
    h = F.max_pooling(h, (2, 2))
    h = F.tanh(PF.affine(h, 16, name="a1"))
    return PF.affine(h, 10, name="a2")


def _train(backend, net, solver_name, steps=3, **fwd):
    """Losses, parameters and per-step transfer counts of a few training steps."""
    nn.clear_parameters()
    nn.seed(0)
    rng = np.random.RandomState(0)
    ctx = get_extension_context(backend)
    with nn.context_scope(ctx):
        x, t = nn.Variable((8, 1, 8, 8)), nn.Variable((8, 1))
        loss = F.mean(F.softmax_cross_entropy(net(x), t))
        solver = getattr(S, solver_name)()
        solver.set_parameters(nn.get_parameters())
    losses, transfers = [], []
    for _ in range(steps):
        x.d, t.d = rng.randn(*x.shape), rng.randint(0, 10, t.shape)
        x.data.cast(np.float32, ctx)          # the host -> device copy of the batch
        t.data.cast(np.float32, ctx)
        boxed.reset_transfers()
        loss.forward(**fwd)
        solver.zero_grad()
        loss.backward(clear_buffer=True)
        solver.weight_decay(1e-4)
        solver.clip_grad_by_norm(10.0)
        solver.update()
        transfers.append(sum(boxed.TRANSFERS.values()))
        losses.append(float(loss.d))
    params = {k: v.d.copy() for k, v in nn.get_parameters().items()}
    return losses, params, transfers


@pytest.mark.parametrize("solver_name", SOLVERS)
@pytest.mark.parametrize("net", [_mlp, _cnn], ids=["mlp", "cnn"])
def test_tutorial_networks_train_on_a_non_numpy_backend_exactly_as_on_cpu(net, solver_name):
    cpu_losses, cpu_params, _ = _train("cpu", net, solver_name)
    losses, params, transfers = _train("boxed", net, solver_name, clear_no_need_grad=True)
    assert losses == cpu_losses
    for key, value in cpu_params.items():
        np.testing.assert_array_equal(params[key], value, err_msg=key)
    # after the first step (parameters initialised on the host move once) nothing crosses
    assert transfers[1:] == [0] * (len(transfers) - 1)


def test_a_training_step_runs_every_kernel_and_rule_on_the_device():
    from nnabla_ext.boxed.kernels import CALLS
    CALLS.clear()
    _train("boxed", _cnn, "Adam", steps=2)
    assert {"Convolution", "BatchNormalization", "MaxPooling", "Affine",
            "SoftmaxCrossEntropy"} <= set(CALLS)


def test_in_place_input_updates_are_visible_on_a_device_family():
    _train("cpu", _cnn, "Sgd")
    cpu_mean = nn.get_parameters(grad_only=False)["bn1/bn/mean"].d.copy()
    _train("boxed", _cnn, "Sgd")
    mean = nn.get_parameters(grad_only=False)["bn1/bn/mean"].d
    assert np.abs(cpu_mean).sum() > 0
    np.testing.assert_array_equal(mean, cpu_mean)


@pytest.mark.parametrize("explicit", [False, True], ids=["graph", "Function.backward"])
@pytest.mark.parametrize("type_config", ["float", "half"])
def test_an_input_written_by_backward_is_visible_on_a_device_family(explicit, type_config):
    # VATNoise's backward stores eps * dy as w's data (nnabla's VAT trick); the write must
    # reach w whichever family the kernel ran in, with a stale host copy of w present.
    got = {}
    for backend in ("cpu", "boxed"):
        with nn.context_scope(get_extension_context(backend, type_config=type_config)):
            x = nn.Variable.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3),
                                             need_grad=True)
            w = nn.Variable.from_numpy_array(np.zeros((2, 3), np.float32), need_grad=True)
            w.d     # a host head that the device write must not leave behind
            y = F.vat_noise(x, w, eps=2.0)
            y.forward()
            if explicit:
                y.g = np.full((2, 3), 3.0, np.float32)
                y.parent.backward([x, w], [y])
            else:
                y.backward(np.full((2, 3), 3.0, np.float32))
            got[backend] = w.d.copy()
    np.testing.assert_array_equal(got["cpu"], np.full((2, 3), 6.0, np.float32))
    np.testing.assert_array_equal(got["boxed"], got["cpu"])


def test_box_refuses_implicit_numpy_conversion():
    from nnabla_ext.boxed import Box
    with pytest.raises(TypeError, match="cannot be converted"):
        np.asarray(Box(np.zeros(2)))


def _grads_by_nn_grad(backend):
    nn.clear_parameters()
    nn.seed(1)
    with nn.context_scope(get_extension_context(backend)):
        x = nn.Variable.from_numpy_array(np.random.RandomState(1).randn(4, 6), need_grad=True)
        h = PF.affine(x, 3, name="g")
        w = h.parent.inputs[1]
        y = F.sum(F.tanh(h) ** 2)
        gx, gw = nn.grad([y], [x, w])
        ggx = nn.grad([F.sum(gx ** 2)], [x])[0]     # second order through nn.grad
        F.sink(gx, gw, ggx).forward()
    return gx.d.copy(), gw.d.copy(), ggx.d.copy()


def test_nn_grad_gives_the_cpu_gradients_on_a_non_numpy_backend():
    for ours, cpu in zip(_grads_by_nn_grad("boxed"), _grads_by_nn_grad("cpu")):
        np.testing.assert_allclose(ours, cpu, rtol=1e-6, atol=1e-7)


def test_auto_forward_training_step_matches_cpu_and_transfers_nothing():
    def step(backend):
        nn.clear_parameters()
        nn.seed(2)
        ctx = get_extension_context(backend)
        x = nn.Variable.from_numpy_array(np.random.RandomState(2).randn(8, 1, 8, 8))
        x.data.cast(np.float32, ctx)
        with nn.context_scope(ctx), nn.auto_forward():
            PF.affine(x, 4, name="warm")      # parameters created on the host
            solver = S.Momentum(0.1)
            solver.set_parameters(nn.get_parameters())
            out = []
            for _ in range(3):
                boxed.reset_transfers()
                loss = F.mean(F.relu(PF.affine(x, 4, name="warm")))
                solver.zero_grad()
                loss.backward()
                solver.update()
                out.append((float(loss.d), sum(boxed.TRANSFERS.values()) - 1))   # -1: loss.d
        return out
    ours, cpu = step("boxed"), step("cpu")
    assert [o[0] for o in ours] == [c[0] for c in cpu]
    assert [o[1] for o in ours][1:] == [0, 0]


def test_recompute_and_clear_buffer_work_on_a_non_numpy_backend():
    def run(backend):
        nn.seed(3)
        with nn.context_scope(get_extension_context(backend)):
            x = nn.Variable.from_numpy_array(np.random.RandomState(3).randn(4, 5),
                                             need_grad=True)
            h = F.dropout(F.tanh(x), p=0.3)
            h.recompute = True
            y = F.sum(F.sin(h) * 2)
            y.forward(clear_no_need_grad=True)
            y.backward(clear_buffer=True)
        return x.g.copy()
    np.testing.assert_array_equal(run("boxed"), run("cpu"))


def test_python_function_and_imperative_calls_mix_with_a_non_numpy_backend():
    from nnabla.function import PythonFunction

    class Double(PythonFunction):
        def setup_impl(self, inputs, outputs):
            outputs[0].reset_shape(inputs[0].shape, True)

        def forward_impl(self, inputs, outputs):
            outputs[0].d = 2 * inputs[0].d

        def backward_impl(self, inputs, outputs, propagate_down, accum):
            g = 2 * outputs[0].g
            inputs[0].g = inputs[0].g + g if accum[0] else g

    ctx = get_extension_context("boxed")
    with nn.context_scope(ctx):
        x = nn.Variable.from_numpy_array(np.arange(4.0), need_grad=True)
        y = F.sum(F.exp(Double(ctx)(F.add_scalar(x, 1.0))))
        y.forward()
        y.backward()
        a = nn.NdArray.from_numpy_array(np.arange(3.0))
        b = F.mul_scalar(a, 3.0) + a
    np.testing.assert_allclose(x.g, 2 * np.exp(2 * (np.arange(4.0) + 1)), rtol=1e-6)
    np.testing.assert_array_equal(b.data, 4 * np.arange(3.0))


def test_parameters_trained_on_a_non_numpy_backend_save_and_load(tmp_path):
    _, params, _ = _train("boxed", _mlp, "Adam", steps=2)
    nn.save_parameters(str(tmp_path / "p.h5"))
    nn.clear_parameters()
    nn.load_parameters(str(tmp_path / "p.h5"))
    for key, value in params.items():
        np.testing.assert_array_equal(nn.get_parameters()[key].d, value)


def test_explicit_function_forward_and_backward_run_on_the_device_family():
    ctx = get_extension_context("boxed")
    with nn.context_scope(ctx):
        x = nn.Variable.from_numpy_array(np.array([[1.0, -2.0, 3.0]]), need_grad=True)
        y = F.relu(x)
    f = y.parent
    x.data.cast(np.float32, ctx)
    y.grad.fill(1.0)
    x.grad.zero()
    f.forward([x], [y])
    f.backward([x], [y], [True])
    np.testing.assert_array_equal(y.d, [[1, 0, 3]])
    np.testing.assert_array_equal(x.g, [[1, 0, 1]])


def test_plugins_import_only_public_core_names():
    root = pathlib.Path(__file__).resolve().parents[2]
    private = re.compile(r"^\s*(from|import)\s+nnabla(\.\w+)*\._\w*", re.M)
    offenders = []
    for path in list((root / "plugins").rglob("*.py")) + list(
            (root / "tests" / "plugins").rglob("*.py")):
        for match in private.finditer(path.read_text()):
            offenders.append(f"{path.relative_to(root)}: {match.group(0).strip()}")
    assert offenders == []
