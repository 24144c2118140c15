"""nnabla.function.<Type>(ctx, ...): low-level function instances and their explicit
setup / forward / backward protocol, checked against numpy formulas."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.function as F
from nnabla.utils import nnabla_pb2
from nnabla.utils.load_function import _create_function_instance


def _variable(array, need_grad=True):
    return nn.Variable.from_numpy_array(np.asarray(array, dtype=np.float32),
                                        need_grad=need_grad)


def test_setup_shapes_outputs_and_forward_fills_them():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    split = F.Split(nn.get_current_context(), axis=1)
    outputs = [nn.Variable() for _ in range(4)]
    split.setup([_variable(x)], outputs)
    assert [o.shape for o in outputs] == [(3,)] * 4
    split.forward([_variable(x)], outputs)
    for i, o in enumerate(outputs):
        np.testing.assert_array_equal(o.d, x[:, i])


def test_backward_overwrites_or_accumulates_as_accum_says():
    xs = [_variable(np.full((2, 3), k)) for k in (1.0, 2.0)]
    stack = F.Stack(nn.get_current_context(), 0)
    y = nn.Variable()
    stack.setup(xs, [y])
    assert y.shape == (2, 2, 3)
    stack.forward(xs, [y])
    np.testing.assert_array_equal(y.d, np.stack([x.d for x in xs]))
    y.g = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    for x in xs:
        x.g = 10.0
    stack.backward(xs, [y], [True, False])
    np.testing.assert_array_equal(xs[0].g, 10.0 + y.g[0])
    np.testing.assert_array_equal(xs[1].g, y.g[1])


def test_an_input_without_need_grad_gets_no_gradient():
    x, w = _variable(np.ones((2, 3))), _variable(np.ones((3, 4)), need_grad=False)
    affine = F.Affine(nn.get_current_context(), base_axis=1)
    y = nn.Variable()
    affine.setup([x, w], [y])
    affine.forward([x, w], [y])
    np.testing.assert_array_equal(y.d, np.full((2, 4), 3.0))
    y.g, w.g = 1.0, 7.0
    affine.backward([x, w], [y], [False, False])
    np.testing.assert_array_equal(x.g, np.full((2, 3), 4.0))
    np.testing.assert_array_equal(w.g, 7.0)


def test_setup_again_follows_new_input_shapes():
    relu = F.ReLU(nn.get_current_context(), False)
    y = nn.Variable()
    relu.setup([_variable(np.ones((2, 2)))], [y])
    x = _variable([[-1.0, 2.0, -3.0]])
    relu.setup([x], [y])
    relu.forward([x], [y])
    np.testing.assert_array_equal(y.d, [[0.0, 2.0, 0.0]])


def test_calling_an_instance_builds_a_graph_node():
    x = _variable(np.arange(4).reshape(2, 2))
    y = F.MulScalar(nn.get_current_context(), 2.0, False)(x, auto_forward=False)
    assert y.parent.name == "MulScalar"
    y.forward()
    np.testing.assert_array_equal(y.d, 2 * x.d)


def test_constructors_take_every_argument_as_nnabla_does():
    with pytest.raises(TypeError, match=r"nnabla.function.Split\(ctx, axis\).*'axis'"):
        F.Split(nn.get_current_context())
    with pytest.raises(TypeError, match="too many"):
        F.Split(nn.get_current_context(), 0, 1)
    with pytest.raises(AttributeError, match="NoSuchFunction"):
        F.NoSuchFunction  # noqa: B018


def test_forward_before_setup_is_refused():
    with pytest.raises(RuntimeError, match="setup"):
        F.Identity(nn.get_current_context()).forward([_variable([1.0])], [nn.Variable()])


def test_nnp_function_instances_follow_the_same_protocol():
    f = nnabla_pb2.Function(name="fc", type="Affine")
    f.affine_param.base_axis = 1
    func = _create_function_instance(nn.get_current_context(), f)
    x = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    w = np.random.RandomState(1).randn(3, 5).astype(np.float32)
    inputs, y = [_variable(x), _variable(w)], nn.Variable()
    func.setup(inputs, [y])                       # bias absent, as an NNP file lists it
    func.forward(inputs, [y])
    np.testing.assert_allclose(y.d, x @ w, rtol=1e-5)


def test_module_examples_run():
    import doctest

    import nnabla._function_instance as module
    import nnabla.utils.load_function as load_function

    assert doctest.testmod(module).failed == 0
    assert doctest.testmod(load_function).failed == 0
