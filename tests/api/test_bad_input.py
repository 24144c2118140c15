"""Bad input is never silent: each mistake raises a TypeError/ValueError (or RuntimeError
where nnabla raises one) whose message names the function, the argument and what was
expected, and leaves no state changed (no parameter created)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.parametric_functions as PF


@pytest.fixture(autouse=True)
def _no_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _x(shape=(2, 3)):
    return nn.Variable.from_numpy_array(np.ones(shape, np.float32))


def _raises(error, fragments, fn):
    with pytest.raises(error) as info:
        fn()
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))
    assert nn.get_parameters(grad_only=False) == {}     # nothing was created


@pytest.mark.parametrize("call, error, fragments", [
    (lambda: PF.affine([_x()], 3), TypeError,
     ["PF.affine", "argument 'inp'", "list", "expected an nnabla.Variable"]),
    (lambda: PF.convolution([_x((1, 1, 4, 4))], 2, (3, 3)), TypeError,
     ["PF.convolution", "argument 'inp'", "list"]),
    (lambda: PF.batch_normalization(None), TypeError,
     ["PF.batch_normalization", "argument 'inp'", "NoneType"]),
    (lambda: PF.embed(np.zeros(3, np.int32), 4, 2), TypeError,
     ["PF.embed", "argument 'inp'", "ndarray"]),
    (lambda: PF.convolution(_x((1, 1, 4, 4)), 2, 3), TypeError,
     ["PF.convolution", "argument 'kernel' is 3", "a tuple of positive ints"]),
    (lambda: PF.affine(_x(), -3), ValueError,
     ["PF.affine", "argument 'n_outmaps' is -3", "a positive int"]),
    (lambda: PF.affine(_x(), (4, 0)), ValueError, ["PF.affine", "argument 'n_outmaps'"]),
    (lambda: PF.convolution(_x((1, 1, 4, 4)), -2, (3, 3)), ValueError,
     ["PF.convolution", "argument 'outmaps' is -2", "a positive int"]),
    (lambda: PF.affine(_x(), "3"), TypeError,
     ["PF.affine", "argument 'n_outmaps' is '3'", "of type str"]),
    (lambda: PF.convolution(_x((1, 1, 4, 4)), 2, (3, "3")), TypeError,
     ["PF.convolution", "argument 'kernel'"]),
    (lambda: PF.embed(_x((3,)), 0, 2), ValueError, ["PF.embed", "argument 'n_inputs' is 0"]),
    (lambda: PF.deconvolution(_x((1, 1, 4, 4)), 2.5, (3, 3)), TypeError,
     ["PF.deconvolution", "argument 'outmaps' is 2.5"]),
])
def test_parametric_functions_check_their_input_and_sizes(call, error, fragments):
    _raises(error, fragments, call)


def test_parametric_size_checks_accept_numpy_ints_and_arrays():
    y = PF.convolution(_x((1, 1, 4, 4)), np.int64(2), np.array([3, 3]))
    assert y.shape == (1, 2, 2, 2)


def test_user_parametric_functions_are_not_checked():
    @PF.parametric_function_api("mine")
    def mine(shape, fix_parameters=False):
        return nn.parameter.get_parameter_or_create("w", shape)
    assert mine((2,)).shape == (2,)
