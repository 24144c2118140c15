"""Bad input to math, activation and logical functions raises clear errors from shape inference.

Also holds the kernel-level checks that a Case table cannot express: straight-through
gradients of rounding functions, and backward passes reading only what the spec's
``backward_needs`` declares.
"""
import numpy as np
import pytest
from kernel_harness import make_kernel
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer
from nnabla.testing.function_cases import cases_activation, cases_logical, cases_math


def _infer(name, in_shapes, **kwargs):
    spec = SPECS[name]
    return infer(spec, in_shapes, bind_args(spec, kwargs))


@pytest.mark.parametrize("a, b, kwargs, fragment", [
    ((3, 4), (3, 4, 5), {}, "at least 3 dimensions"),
    ((2, 3, 4), (2, 5, 4), {}, "reduction size"),
    ((2, 3, 4), (1, 2, 4, 5), {}, "same rank"),
    ((2, 3, 4), (3, 4, 5), {}, "batch axes"),
    ((2, 4, 3), (2, 4, 5), {"transpose_a": False}, "reduction size"),
])
def test_batch_matmul_rejects_incompatible_shapes(a, b, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        _infer("BatchMatmul", [a, b], **kwargs)
    assert "F.batch_matmul" in str(info.value)


def test_batch_matmul_broadcasts_batch_axes_and_transposes():
    _, shapes = _infer("BatchMatmul", [(2, 1, 4, 3), (1, 5, 4, 6)], transpose_a=True)
    assert shapes == ((2, 5, 3, 6),)


@pytest.mark.parametrize("name, shape, kwargs", [
    ("Softmax", (2, 3), {"axis": 2}),
    ("LogSoftmax", (2, 3), {"axis": -3}),
    ("CumSum", (2, 3), {"axis": 5}),
    ("CumProd", (4,), {"axis": -2}),
    ("CReLU", (2, 3), {"axis": 2}),
    ("CELU", (2,), {"axis": 1}),
])
def test_out_of_range_axis_names_function_and_argument(name, shape, kwargs):
    with pytest.raises(ValueError, match=r"argument 'axis'.*dimensions"):
        _infer(name, [shape], **kwargs)


def test_softmax_axis_defaults_to_last_and_cumsum_to_first():
    assert _infer("Softmax", [(2, 3, 4)])[0]["axis"] == 2
    assert _infer("LogSoftmax", [(2, 3, 4)], axis=-2)[0]["axis"] == 1
    assert _infer("CumSum", [(2, 3)])[0]["axis"] == 0


def test_crelu_and_celu_double_the_axis():
    assert _infer("CReLU", [(2, 3, 4)])[1] == ((2, 6, 4),)
    assert _infer("CELU", [(2, 3, 4)], axis=-1)[1] == ((2, 3, 8),)


@pytest.mark.parametrize("slope", [(4,), (3, 1), (2, 3)])
def test_prelu_rejects_a_slope_that_is_neither_shared_nor_per_channel(slope):
    with pytest.raises(ValueError, match="argument 'x1'"):
        _infer("PReLU", [(2, 3, 4), slope])


def test_prelu_accepts_shared_and_per_channel_slopes():
    for slope in [(), (1,), (1, 1), (3,)]:
        assert _infer("PReLU", [(2, 3, 4), slope])[1] == ((2, 3, 4),)


@pytest.mark.parametrize("name", ["Equal", "LogicalAnd", "ATan2", "Greater"])
def test_binary_functions_need_broadcastable_shapes_of_equal_rank(name):
    with pytest.raises(ValueError, match="same rank"):
        _infer(name, [(2, 3), (3,)])
    with pytest.raises(ValueError, match="broadcastable"):
        _infer(name, [(2, 3), (2, 4)])


def test_where_checks_branch_shapes_and_condition_prefix():
    with pytest.raises(ValueError, match="argument 'x_false'"):
        _infer("Where", [(2,), (2, 3), (3, 2)])
    with pytest.raises(ValueError, match="argument 'condition'"):
        _infer("Where", [(3,), (2, 3), (2, 3)])
    assert _infer("Where", [(2,), (2, 3), (2, 3)])[1] == ((2, 3),)


def test_searchsorted_needs_matching_leading_axes():
    with pytest.raises(ValueError, match="argument 'values'"):
        _infer("SearchSorted", [(2, 5), (3, 4)])
    args, shapes = _infer("SearchSorted", [(2, 5), (2, 4)])
    assert shapes == ((2, 4),) and args["right"] is False


def test_bad_argument_types_raise_type_errors():
    with pytest.raises(TypeError, match="argument 'transpose_a'"):
        _infer("BatchMatmul", [(2, 3, 4), (2, 4, 5)], transpose_a="yes")
    with pytest.raises(TypeError, match="missing required argument 'val'"):
        _infer("LogicalAndScalar", [(2, 3)])
    with pytest.raises(TypeError, match="argument 'alpha'"):
        _infer("ELU", [(2, 3)], alpha="big")


@pytest.mark.parametrize("name", ["Round", "Ceil", "Floor", "Sign"])
def test_rounding_and_sign_pass_the_gradient_straight_through(name):
    case = next(c for c in cases_math.CASES + cases_logical.CASES if c.name == name)
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    dy = np.random.RandomState(1).randn(*xs[0].shape)
    (dx,) = kernel.backward([None], [None], [dy], [True])
    np.testing.assert_array_equal(dx, dy)


def test_round_is_half_away_from_zero_not_half_to_even():
    case = next(c for c in cases_math.CASES if c.name == "Round")
    kernel, xs, _ = make_kernel(case, case.make_inputs(), np.float32)
    (y,) = kernel.forward(xs)
    np.testing.assert_array_equal(y[0], [-3, -2, -1, 1, 2, 3])


_DIFFERENTIABLE = [c for c in cases_math.CASES + cases_activation.CASES + cases_logical.CASES
                   if SPECS[c.name].differentiable]


@pytest.mark.parametrize("case", _DIFFERENTIABLE, ids=str)
def test_backward_reads_only_what_the_spec_declares(case):
    spec = SPECS[case.name]
    kernel, xs, _ = make_kernel(case, case.make_inputs())
    ys = kernel.forward(xs)
    dys = [np.ones_like(y) for y in ys]
    expected = kernel.backward(xs, list(ys), dys, [True] * len(xs))
    keep_in, keep_out = spec.needed_inputs(len(xs)), spec.needed_outputs(len(ys))
    xs_seen = [x if i in keep_in else None for i, x in enumerate(xs)]
    ys_seen = [y if i in keep_out else None for i, y in enumerate(ys)]
    got = kernel.backward(xs_seen, ys_seen, dys, [True] * len(xs))
    for g, e in zip(got, expected):
        if e is not None:
            np.testing.assert_array_equal(g, e)
