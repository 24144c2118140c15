"""Bad input is never silent: each mistake raises a TypeError/ValueError (or RuntimeError
where nnabla raises one) whose message names the function, the argument and what was
expected, and leaves no state changed (no parameter created)."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
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


def _int_var(values):
    return nn.Variable.from_numpy_array(np.array(values, np.int32))


@pytest.mark.parametrize("call, fragments", [
    (lambda: F.affine(_x(), nn.Variable((3,))),
     ["F.affine", "argument 'weight'", "(3,)", "at least 2 dimensions"]),
    (lambda: F.affine(_x(), nn.Variable((4, 2))), ["F.affine", "argument 'weight'", "(3, ...)"]),
    (lambda: F.embed(_int_var([0, 1]), nn.Variable((5,))),
     ["F.embed", "argument 'w'", "(5,)", "at least 2 dimensions"]),
    (lambda: F.max_pooling(nn.Variable((1, 1, 4, 4)), (3, 3), pad=(3, 3)),
     ["F.max_pooling", "argument 'pad'", "values below kernel (3, 3)"]),
    (lambda: F.average_pooling(nn.Variable((1, 1, 4, 4)), (0, 3)),
     ["F.average_pooling", "argument 'kernel'"]),
    (lambda: F.interpolate(nn.Variable((1, 1, 4, 4)), output_size=(8, 8, 8, 8)),
     ["F.interpolate", "argument 'output_size'", "1, 2 or 3 sizes"]),
    (lambda: F.interpolate(nn.Variable((4, 4)), output_size=(8, 8, 8)),
     ["F.interpolate", "argument 'x'", "at least 3 dimensions"]),
    (lambda: F.slice(_x(), (0,), (1, 2), (1, 1)),
     ["F.slice", "argument 'stop' is (1, 2)", "as many as 'start' (0,)"]),
    (lambda: F.slice(_x(), (0, 0), (1, 2), (1,)), ["F.slice", "argument 'step' is (1,)"]),
    (lambda: F.slice(_x(), (0, 0, 0)), ["F.slice", "argument 'start'", "at most 2 values"]),
    (lambda: F.rand(1.0, 0.0, shape=(2,)), ["F.rand", "argument 'high' is 0.0", "low=1.0"]),
    (lambda: F.rand(1.0, 1.0, shape=(2,)), ["F.rand", "argument 'high' is 1.0"]),
    (lambda: F.softmax_cross_entropy(_x(), _int_var([[3], [0]])),
     ["F.softmax_cross_entropy", "argument 'target' is 3", "[0, 3)"]),
])
def test_functions_reject_bad_shapes_and_values(call, fragments):
    # A ValueError, and a RuntimeError as nnabla raises from a function's setup.
    with pytest.raises(ValueError) as info:
        y = call()
        y.forward()
    assert isinstance(info.value, RuntimeError)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_nnabla_conventions_that_stay_valid():
    # As nnabla 1.39: a pooling window larger than the (padded) input is clipped to it
    # (models made with nnabla use it: a 2x2 average over a 1x1 map is that element, and
    # refusing it would refuse those models); a 1-D output_size interpolates the last axis;
    # softmax_cross_entropy
    # ignores negative labels (loss 0); one_hot wraps indices in [-n, -1] and gives a zero
    # vector beyond the range (nnabla's documented behaviour, not an error).
    y = F.average_pooling(nn.Variable.from_numpy_array(np.full((1, 1, 1, 1), 3.0)), (2, 2))
    y.forward()
    assert y.shape == (1, 1, 1, 1)
    assert F.interpolate(nn.Variable((1, 1, 4, 4)), output_size=(8,)).shape == (1, 1, 4, 8)
    loss = F.softmax_cross_entropy(_x(), _int_var([[-1], [0]]))
    loss.forward()
    np.testing.assert_allclose(loss.d.ravel(), [0.0, np.log(3.0)], rtol=1e-6)
    y = F.one_hot(_int_var([[-1], [1], [3]]), (3,))
    y.forward()
    np.testing.assert_array_equal(y.d, [[0, 0, 1], [0, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("call, error, fragments", [
    (lambda: nn.Variable.from_numpy_array(np.ones(2, np.complex64)), TypeError,
     ["Variable.from_numpy_array", "argument 'data'", "complex64"]),
    (lambda: nn.NdArray.from_numpy_array(np.ones(2, np.complex128)), TypeError,
     ["NdArray.from_numpy_array", "argument 'nparr'", "complex128"]),
    (lambda: nn.NdArray((2,)).cast(np.complex64), TypeError,
     ["NdArray.cast", "argument 'dtype'", "complex64"]),
    (lambda: nn.Variable.from_numpy_array(None), TypeError,
     ["Variable.from_numpy_array", "argument 'data' is None"]),
    (lambda: nn.NdArray.from_numpy_array(None), TypeError,
     ["NdArray.from_numpy_array", "argument 'nparr' is None"]),
    (lambda: nn.Variable.from_numpy_array(np.array(["a"])), TypeError, ["dtype <U1"]),
    (lambda: nn.Variable.from_numpy_array(np.ones(3), grad=np.ones(2)), ValueError,
     ["argument 'grad' has shape (2,)", "(3,)"]),
    (lambda: nn.Variable((2.5, 3)), TypeError, ["nn.Variable", "argument 'shape'", "2.5"]),
    (lambda: nn.Variable("23"), TypeError, ["nn.Variable", "argument 'shape'", "'23'"]),
    (lambda: nn.Variable((2, -1)), ValueError, ["nn.Variable", "negative size"]),
])
def test_arrays_and_variables_refuse_what_nnabla_cannot_hold(call, error, fragments):
    _raises(error, fragments, call)


@pytest.mark.parametrize("value", [np.ones(3), np.ones((1, 3)), np.ones((3, 2)), np.ones(6)])
@pytest.mark.parametrize("attr", ["d", "g"])
def test_assigning_another_shape_to_d_or_g_raises_and_keeps_the_values(attr, value):
    v = nn.Variable.from_numpy_array(np.full((2, 3), 5.0, np.float32))
    v.g = np.full((2, 3), 5.0, np.float32)
    with pytest.raises(ValueError, match=r"NdArray.data: cannot assign an array of shape"):
        setattr(v, attr, value)
    np.testing.assert_array_equal(getattr(v, attr), np.full((2, 3), 5.0))
    v.d = np.arange(6.0).reshape(2, 3, 1)           # the same values in order: accepted
    np.testing.assert_array_equal(v.d, np.arange(6.0).reshape(2, 3))


def test_rewire_on_checks_the_other_variable():
    a, b = nn.Variable((2, 3)), nn.Variable((3, 2))
    y = F.relu(a)
    with pytest.raises(ValueError, match=r"Variable.rewire_on: argument 'var' has shape "
                       r"\(3, 2\); expected this variable's shape \(2, 3\)") as info:
        a.rewire_on(F.identity(b))
    assert isinstance(info.value, RuntimeError)      # nnabla raises a RuntimeError
    assert y.parent.inputs[0].shape == (2, 3)        # nothing rewired
    with pytest.raises(TypeError, match="argument 'var' is of type ndarray"):
        a.rewire_on(np.ones((2, 3)))


def test_set_default_context_inside_a_context_scope_raises_and_changes_nothing():
    before = nn.get_current_context()
    inner = nn.Context(["cpu:float"], "CpuArray", "0")
    with nn.context_scope(inner):
        with pytest.raises(RuntimeError, match="nn.set_default_context: called inside a "
                           "context_scope"):
            nn.set_default_context(nn.Context(["cpu:half"], "CpuArray", "0"))
        assert nn.get_current_context() == inner
    assert nn.get_current_context() == before
    with pytest.raises(TypeError, match="argument 'ctx' is of type str"):
        nn.set_default_context("cpu")


@pytest.mark.parametrize("params, fragments", [
    ([_x()], ["Solver.set_parameters", "argument 'param_dict' is of type list",
              "expected a dict"]),
    (None, ["argument 'param_dict' is of type NoneType"]),
    ({"w": np.ones(3)}, ["parameter 'w' is of type ndarray"]),
    ({1: _x()}, ["key 1 is of type int"]),
])
def test_solver_set_parameters_takes_a_dict_of_variables(params, fragments):
    import nnabla.solvers as S
    solver = S.Sgd()
    solver.set_parameters({"kept": _x()})
    with pytest.raises(TypeError) as info:
        solver.set_parameters(params)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert list(solver.get_parameters()) == ["kept"]       # nothing changed


@pytest.mark.parametrize("call, name", [
    (lambda: F.relu(None), "F.relu: input 'x' is None"),
    (lambda: F.add2(_x(), None), "F.add2: input 'x1' is None"),
    (lambda: F.affine(_x(), None), "F.affine: input 'weight' is None"),
    (lambda: F.concatenate(_x(), None), "F.concatenate: input 'x[1]' is None"),
    (lambda: F.convolution(None, nn.Variable((2, 3, 1, 1))), "F.convolution: input 'x' is None"),
])
def test_functions_given_none_for_an_input_name_it(call, name):
    with pytest.raises(TypeError, match=r"expected an nnabla.Variable or nnabla.NdArray") as info:
        call()
    assert name in str(info.value)
    y = F.affine(_x(), nn.Variable((3, 2)), None)       # an optional input may be None
    assert y.shape == (2, 2)


@pytest.mark.parametrize("call, fragment", [
    (lambda: F.mul_scalar(_x(), "2"), "F.mul_scalar: argument 'val' is of type str"),
    (lambda: F.leaky_relu(_x(), alpha="a"), "F.leaky_relu: argument 'alpha' is of type str"),
    (lambda: F.max_pooling(_x((1, 1, 4, 4)), "22"), "F.max_pooling: argument 'kernel'"),
])
def test_strings_where_numbers_belong_raise_type_error(call, fragment):
    with pytest.raises(TypeError, match=fragment):
        call()


@pytest.mark.parametrize("call, error, fragments", [
    (lambda: PF.batch_normalization(_x(), axes=[5]), ValueError,
     ["PF.batch_normalization", "argument 'axes' is [5]", "in [-2, 2)"]),
    (lambda: PF.affine(_x(), 3, base_axis=2), ValueError, ["PF.affine", "argument 'base_axis'"]),
    (lambda: PF.layer_normalization(_x(), batch_axis="0"), TypeError,
     ["PF.layer_normalization", "argument 'batch_axis'"]),
])
def test_parametric_axes_must_be_axes_of_the_input(call, error, fragments):
    _raises(error, fragments, call)


@pytest.mark.parametrize("call", [lambda: nn.load_parameters(None),
                                  lambda: nn.save_parameters(3)])
def test_parameter_files_need_a_path_or_a_file(call):
    with pytest.raises(TypeError, match=r"nn\.(load|save)_parameters: argument 'path' is of "
                       "type"):
        call()


def test_sync_batch_normalization_group_is_a_name_not_a_size():
    """PF.sync_batch_normalization's ``group`` names a communicator group ('world'), while
    PF.convolution's ``group`` is a count: the checks follow each layer's default."""
    x = nn.Variable((2, 3, 4, 4))
    with nn.parameter_scope("sync_bn_group"):
        with pytest.raises(TypeError, match=r"PF.sync_batch_normalization: argument 'group'"):
            PF.sync_batch_normalization(x, comm=None, group=3)
        with pytest.raises(ValueError, match=r"PF.convolution: argument 'group'"):
            PF.convolution(x, 4, (3, 3), group=0)
        assert nn.get_parameters() == {}
