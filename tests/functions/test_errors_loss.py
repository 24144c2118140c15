"""Bad input to the loss and validation functions raises errors naming the function,
the argument, what was expected and what was given."""
import numpy as np
import pytest
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def infer_shapes(name, *in_shapes, **args):
    spec = SPECS[name]
    return infer(spec, list(in_shapes), bind_args(spec, args))


def kernel(name, *in_shapes, **args):
    from nnabla_ext.cpu.kernels import CPU_KERNELS
    spec = SPECS[name]
    args, out_shapes = infer(spec, list(in_shapes), bind_args(spec, args))
    return CPU_KERNELS[name](spec, args, list(in_shapes), out_shapes)


def test_label_axis_defaults_to_the_last_and_accepts_negative_values():
    args, outs = infer_shapes("SoftmaxCrossEntropy", (2, 3, 4), (2, 3, 1))
    assert args["axis"] == 2 and outs == ((2, 3, 1),)
    args, outs = infer_shapes("TopNError", (2, 3, 4), (2, 1, 4), axis=-2)
    assert args["axis"] == 1 and outs == ((2, 1, 4),)
    assert infer_shapes("ConfusionMatrix", (5, 3), (5, 1))[1] == ((3, 3),)


@pytest.mark.parametrize("name", ["SoftmaxCrossEntropy", "CategoricalCrossEntropy",
                                  "TopNError", "ConfusionMatrix"])
@pytest.mark.parametrize("target", [(2, 3, 4), (2, 3), (2, 2, 1)])
def test_label_shape_must_match_x_with_one_along_axis(name, target):
    with pytest.raises(ValueError, match=r"argument 'target' has shape .*expected \(2, 3, 1\)"):
        infer_shapes(name, (2, 3, 4), target)


def test_label_axis_out_of_range_names_axis():
    with pytest.raises(ValueError, match=r"F\.softmax_cross_entropy: argument 'axis' is 3"):
        infer_shapes("SoftmaxCrossEntropy", (2, 3, 4), (2, 3, 1), axis=3)


@pytest.mark.parametrize("name", ["SoftmaxCrossEntropy", "CategoricalCrossEntropy"])
def test_labels_past_the_class_count_raise_with_range_and_value(name):
    x = np.full((2, 5), 0.2, np.float32)
    t = np.array([[1], [7]])
    snake = SPECS[name].snake
    with pytest.raises(ValueError, match=rf"F\.{snake}: argument 'target' is 7; "
                                         r"expected labels in \[0, 5\)"):
        kernel(name, x.shape, t.shape).forward([x, t])


def test_negative_labels_are_ignored_by_cross_entropy():
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    t = np.array([[-1], [2], [-5]])
    k = kernel("SoftmaxCrossEntropy", x.shape, t.shape)
    y = k.forward([x, t])[0]
    assert y[0, 0] == 0 and y[2, 0] == 0 and y[1, 0] > 0
    dx = k.backward([x, t], [y], [np.ones_like(y)], [True, False])[0]
    assert (dx[[0, 2]] == 0).all() and abs(dx[1].sum()) < 1e-6


@pytest.mark.parametrize("name", ["TopNError", "ConfusionMatrix"])
def test_validation_labels_must_be_in_range(name):
    x = np.zeros((2, 3), np.float32)
    t = np.array([[0], [-1]])
    with pytest.raises(ValueError, match=r"argument 'target' is -1; expected labels in \[0, 3\)"):
        kernel(name, x.shape, t.shape).forward([x, t])


def test_top_n_error_needs_positive_n():
    with pytest.raises(ValueError, match=r"F\.top_n_error: argument 'n' is 0"):
        infer_shapes("TopNError", (2, 3), (2, 1), n=0)


@pytest.mark.parametrize("name", ["SigmoidCrossEntropy", "BinaryCrossEntropy", "BinaryError"])
def test_element_wise_label_losses_need_equal_shapes(name):
    with pytest.raises(ValueError, match=r"argument 'target' has shape \(2, 1\)"):
        infer_shapes(name, (2, 3), (2, 1))


@pytest.mark.parametrize("name", ["SquaredError", "AbsoluteError", "HuberLoss"])
def test_regression_losses_broadcast_like_binary_functions(name):
    assert infer_shapes(name, (2, 3), (2, 1))[1] == ((2, 3),)
    with pytest.raises(ValueError, match="argument 'x1'"):
        infer_shapes(name, (2, 3), (3,))
    with pytest.raises(ValueError, match="argument 'x1'"):
        infer_shapes(name, (2, 3), (2, 4))


def test_epsilon_insensitive_loss_requires_epsilon():
    with pytest.raises(TypeError, match="missing required argument 'epsilon'"):
        infer_shapes("EpsilonInsensitiveLoss", (2,), (2,))


def test_kl_multinomial_shapes_and_base_axis():
    assert infer_shapes("KLMultinomial", (2, 3, 4), (2, 3, 4), base_axis=2)[1] == ((2, 3, 1),)
    with pytest.raises(ValueError, match=r"F\.kl_multinomial: argument 'q' has shape"):
        infer_shapes("KLMultinomial", (2, 3), (2, 4))
    with pytest.raises(ValueError, match="argument 'base_axis' is 2"):
        infer_shapes("KLMultinomial", (2, 3), (2, 3), base_axis=2)


def test_label_inputs_are_integer_and_not_differentiated():
    for name in ("SoftmaxCrossEntropy", "CategoricalCrossEntropy", "SigmoidCrossEntropy",
                 "TopNError", "ConfusionMatrix"):
        assert SPECS[name].inputs[1].integer
    x = np.zeros((2, 3), np.float32)
    t = np.zeros((2, 1), np.int64)
    assert kernel("SoftmaxCrossEntropy", x.shape, t.shape).backward(
        [x, t], [None], [np.ones((2, 1), np.float32)], [True, True])[1] is None
