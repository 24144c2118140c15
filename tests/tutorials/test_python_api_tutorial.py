""""NNabla Python API Demonstration Tutorial" (nnabla-python-docs.txt, from line 660), no plots."""
import re

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla import solvers as S



def test_new_ndarray_is_float32_and_its_data_is_a_writable_numpy_reference():
    a = nn.NdArray((2, 3, 4))
    assert a.data.shape == (2, 3, 4) and a.data.dtype == np.float32
    a.data = np.random.randn(*a.shape)
    values = a.data.copy()
    a.data[0, :, ::2] = 0
    values[0, :, ::2] = 0
    np.testing.assert_array_equal(a.data, values)
    a.fill(1)  # Filling all values with one.
    np.testing.assert_array_equal(a.data, np.ones((2, 3, 4)))
    b = nn.NdArray.from_numpy_array(np.ones(a.shape))
    np.testing.assert_array_equal(b.data, np.ones((2, 3, 4)))


def test_variable_holds_data_and_grad_ndarrays_reached_by_d_and_g():
    x = nn.Variable([2, 3, 4], need_grad=True)
    assert re.fullmatch(r"<NdArray\(\(2, 3, 4\)\) at 0x[0-9a-f]+>", repr(x.data))
    assert isinstance(x.grad, nn.NdArray) and x.shape == (2, 3, 4)
    x.d = 1.2345  # To avoid NaN
    assert np.all(x.d == x.data.data), 'd: {} != {}'.format(x.d, x.data.data)
    x.g = 1.2345  # To avoid NaN
    assert np.all(x.g == x.grad.data), 'g: {} != {}'.format(x.g, x.grad.data)
    x.grad.zero()
    assert not np.any(x.g) and x.parent is None


def test_variable_from_numpy_array_takes_data_and_optional_grad():
    x2 = nn.Variable.from_numpy_array(np.ones((3,)), need_grad=True)
    x3 = nn.Variable.from_numpy_array(np.ones((3,)), np.zeros((3,)), need_grad=True)
    assert re.fullmatch(r"<Variable\(\(3,\), need_grad=True\) at 0x[0-9a-f]+>", repr(x2))
    np.testing.assert_array_equal(x2.d, np.ones(3))
    np.testing.assert_array_equal(x3.d, np.ones(3))
    np.testing.assert_array_equal(x3.g, np.zeros(3))


def test_sigmoid_sum_graph_links_parents_and_back_propagates_the_sigmoid_slope():
    x = nn.Variable([2, 3, 4], need_grad=True)
    x.d = 1.2345
    sigmoid_output = F.sigmoid(x)
    sum_output = F.reduce_sum(sigmoid_output)
    assert sigmoid_output.parent.name == "Sigmoid" and sum_output.parent.name == "ReduceSum"
    assert sigmoid_output.parent.inputs == [x] and sum_output.parent.inputs == [sigmoid_output]
    sum_output.forward()
    assert sum_output.d == pytest.approx(np.sum(1.0 / (1.0 + np.exp(-x.d))), rel=1e-6)
    x.grad.zero()
    sum_output.backward()
    np.testing.assert_array_equal(sigmoid_output.g, np.ones((2, 3, 4)))
    s = 1 / (1 + np.exp(-1.2345))
    np.testing.assert_allclose(x.g, np.full((2, 3, 4), s * (1 - s)), rtol=1e-6)  # 0.17459197


def build_affine():
    x = nn.Variable([5, 2])  # Input
    w = nn.Variable([2, 3], need_grad=True)  # Weights
    b = nn.Variable([3], need_grad=True)  # Biases
    affine_out = F.affine(x, w, b)  # Create a graph including only affine
    x.d = np.random.randn(*x.shape)
    w.d = np.random.randn(*w.shape)
    b.d = np.random.randn(*b.shape)
    x.grad.zero()  # Just for showing gradients are not computed when need_grad=False (default).
    w.grad.zero()
    b.grad.zero()
    affine_out.forward()
    affine_out.backward()
    return x, w, b, affine_out


def test_affine_output_and_weight_gradient_match_numpy_and_skip_the_input():
    x, w, b, affine_out = build_affine()
    np.testing.assert_allclose(affine_out.d, np.dot(x.d, w.d) + b.d, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.g, np.repeat(x.d.sum(axis=0)[:, None], 3, axis=1), rtol=1e-5)
    np.testing.assert_array_equal(x.g, np.zeros((5, 2)))


def test_affine_bias_gradient_is_the_batch_size():
    x, w, b, affine_out = build_affine()
    np.testing.assert_array_equal(b.g, [5., 5., 5.])


def param_shapes():
    return [(k, v.shape) for k, v in nn.get_parameters().items()]


def test_parameter_scopes_name_nest_and_clear_parametric_function_parameters():
    x = nn.Variable([5, 2])
    with nn.parameter_scope("affine1"):
        c1 = PF.affine(x, 3)
    c1 = PF.affine(x, 3, name='affine1')  # the same parameters again
    assert c1.shape == (5, 3)
    assert param_shapes() == [("affine1/affine/W", (2, 3)), ("affine1/affine/b", (3,))]
    with nn.parameter_scope('foo'):
        h = PF.affine(x, 3)
        with nn.parameter_scope('bar'):
            h = PF.affine(h, 4)
    with nn.parameter_scope("foo"):
        assert param_shapes() == [("affine/W", (2, 3)), ("affine/b", (3,)),
                                  ("bar/affine/W", (3, 4)), ("bar/affine/b", (4,))]
    with nn.parameter_scope("foo"):
        nn.clear_parameters()
    assert param_shapes() == [("affine1/affine/W", (2, 3)), ("affine1/affine/b", (3,))]


def build_mlp_example():
    batchsize = 16
    x = nn.Variable([batchsize, 2])
    with nn.parameter_scope("fc1"):
        h = F.tanh(PF.affine(x, 512))
    with nn.parameter_scope("fc2"):
        y = PF.affine(h, 1)
    label = nn.Variable([batchsize, 1])
    loss = F.reduce_mean(F.squared_error(y, label))
    return x, h, y, label, loss


def test_mlp_example_infers_shapes_and_computes_the_mean_squared_error():
    x, h, y, label, loss = build_mlp_example()
    assert (h.shape, y.shape) == ((16, 512), (16, 1))
    assert param_shapes() == [("fc1/affine/W", (2, 512)), ("fc1/affine/b", (512,)),
                              ("fc2/affine/W", (512, 1)), ("fc2/affine/b", (1,))]
    x.d = np.random.randn(*x.shape)  # Set random input
    label.d = np.random.randn(*label.shape)  # Randomly generate labels
    loss.forward()
    w1, b1, w2, b2 = (p.d.astype(np.float64) for p in nn.get_parameters().values())
    prediction = np.tanh(x.d @ w1 + b1) @ w2 + b2
    np.testing.assert_allclose(y.d, prediction, rtol=1e-4, atol=1e-6)
    assert loss.d == pytest.approx(np.mean((prediction - label.d) ** 2), rel=1e-4)


def test_imperative_update_with_ndarray_operators_descends_the_gradient():
    x, h, y, label, loss = build_mlp_example()
    x.d, label.d = np.random.randn(16, 2), np.random.randn(16, 1)
    loss.forward()
    for name, param in nn.get_parameters().items():
        param.grad.zero()
    loss.backward()
    before = {k: (p.d.copy(), p.g.copy()) for k, p in nn.get_parameters().items()}
    for name, param in nn.get_parameters().items():
        param.data -= param.grad * 0.001  # 0.001 as learning rate
    for name, param in nn.get_parameters().items():
        np.testing.assert_allclose(param.d, before[name][0] - 0.001 * before[name][1], rtol=1e-6)


def test_functions_on_ndarrays_run_at_once_and_support_in_place_operators():
    xi = nn.NdArray.from_numpy_array(np.arange(4).reshape(2, 2))
    yi = F.relu(xi - 1)
    assert isinstance(yi, nn.NdArray)
    np.testing.assert_array_equal(yi.data, [[0, 0], [1, 2]])
    xi.copy_from(xi + 1)
    assert np.all(xi.data == (np.arange(4).reshape(2, 2) + 1))
    xi += 1
    assert np.all(xi.data == (np.arange(4).reshape(2, 2) + 2))


def test_sgd_solver_update_equals_the_vanilla_gradient_step():
    x, h, y, label, loss = build_mlp_example()
    solver = S.Sgd(lr=0.00001)
    solver.set_parameters(nn.get_parameters())
    x.d = np.random.randn(*x.shape)
    label.d = np.random.randn(*label.shape)
    loss.forward()
    solver.zero_grad()
    loss.backward()
    before = {k: (p.d.copy(), p.g.copy()) for k, p in nn.get_parameters().items()}
    solver.update()
    for name, param in nn.get_parameters().items():
        np.testing.assert_allclose(param.d, before[name][0] - 1e-5 * before[name][1], rtol=1e-6)


def vector2length(x):
    # x : [B, 2] where B is number of samples.
    return np.sqrt(np.sum(x ** 2, axis=1, keepdims=True))


def length_mlp(x):
    h = x
    for i, hnum in enumerate([4, 8, 4, 2]):
        h = F.tanh(PF.affine(h, hnum, name="fc{}".format(i)))
    y = PF.affine(h, 1, name='fc')
    return y


def random_data_provider(n):
    x = np.random.uniform(-1, 1, size=(n, 2))
    y = vector2length(x)
    return x, y


def build_length_regression():
    batchsize = 100
    x = nn.Variable([batchsize, 2])
    y = length_mlp(x)
    label = nn.Variable([batchsize, 1])
    loss = F.reduce_mean(F.squared_error(y, label))
    return x, y, label, loss


def test_adam_with_clear_buffers_learns_the_vector_length(capsys):
    x, y, label, loss = build_length_regression()
    solver = S.Adam(alpha=0.01)
    solver.set_parameters(nn.get_parameters())
    num_iter = 500
    for i in range(num_iter):
        xx, ll = random_data_provider(100)
        x.d = xx
        label.d = ll
        loss.forward(clear_no_need_grad=True)
        solver.zero_grad()
        loss.backward(clear_buffer=True)
        solver.weight_decay(1e-6)
        solver.update()
        if i % 100 == 0 or i == num_iter - 1:
            print("Loss@{:4d}: {}".format(i, loss.d))
    losses = [float(line.split(": ")[1]) for line in capsys.readouterr().out.splitlines()]
    assert len(losses) == 6 and losses[0] > 0.5 and max(losses[-2:]) < 0.1  # nnabla: 0.85, 0.04


def test_persistent_flag_keeps_the_prediction_through_a_clear_buffer_forward():
    x, y, label, loss = build_length_regression()
    x.d, label.d = random_data_provider(100)
    loss.forward()
    prediction = y.d.copy()
    loss.forward(clear_buffer=True)  # clears `y`: the tutorial prints stale memory here
    y.persistent = True
    loss.forward(clear_buffer=True)
    np.testing.assert_array_equal(y.d, prediction)


def test_parametric_functions_on_an_ndarray_predict_at_once():
    x, y, label, loss = build_length_regression()
    x.d = np.random.uniform(-1, 1, size=(100, 2))
    y.forward()
    xi = nn.NdArray.from_numpy_array(x.d)
    yi = length_mlp(xi)
    assert isinstance(yi, nn.NdArray)
    np.testing.assert_allclose(yi.data.copy(), y.d, rtol=1e-6)


def test_parameters_saved_to_h5_load_back_at_the_root_and_under_a_scope():
    length_mlp(nn.Variable([100, 2]))
    saved = [(k, v.d.copy()) for k, v in nn.get_parameters().items()]
    path_param = "param-vector2length.h5"
    nn.save_parameters(path_param)
    nn.clear_parameters()
    assert nn.get_parameters() == {}
    nn.load_parameters(path_param)
    with nn.parameter_scope('foo'):
        nn.load_parameters(path_param)
    names = [f"{layer}/affine/{p}" for layer in ("fc0", "fc1", "fc2", "fc3", "fc") for p in "Wb"]
    assert list(nn.get_parameters()) == names + ["foo/" + n for n in names]
    for (name, value), (_, loaded), (_, under_foo) in zip(saved, nn.get_parameters().items(),
                                                          list(nn.get_parameters().items())[10:]):
        np.testing.assert_array_equal(loaded.d, value)
        np.testing.assert_array_equal(under_foo.d, value)
