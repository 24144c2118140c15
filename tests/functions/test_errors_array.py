"""Bad input to array-manipulation functions raises clear errors.

Shape errors come from shape inference (no kernel runs); index errors come from
the kernels, which must never read outside their input.
"""
import re

import numpy as np
import pytest
from nnabla.testing.function_cases import Case, Fixed, Normal
from kernel_harness import make_kernel
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _infer(name, in_shapes, **kwargs):
    spec = SPECS[name]
    return infer(spec, in_shapes, bind_args(spec, kwargs))


def test_concatenate_mismatch_names_the_axis_and_both_shapes():
    with pytest.raises(ValueError) as info:
        _infer("Concatenate", [(2, 3, 4), (2, 2, 4)], axis=2)
    message = str(info.value)
    for fragment in ("F.concatenate", "x[1]", "(2, 2, 4)", "(2, 3, 4)", "axis 2"):
        assert fragment in message


def test_concatenate_defaults_to_the_last_axis():
    args, shapes = _infer("Concatenate", [(2, 3), (2, 5)])
    assert args["axis"] == 1 and shapes == ((2, 8),)


def test_reshape_to_another_size_names_both_sizes():
    with pytest.raises(ValueError, match=r"size 24.*its size is 20") as info:
        _infer("Reshape", [(2, 3, 4)], shape=(5, 4))
    assert "F.reshape" in str(info.value)


@pytest.mark.parametrize("shape", [(-1, -1), (5, -1), (-2, 12)])
def test_reshape_rejects_bad_unknown_sizes(shape):
    with pytest.raises(ValueError, match="F.reshape"):
        _infer("Reshape", [(2, 3, 4)], shape=shape)


@pytest.mark.parametrize("name, in_shapes, kwargs", [
    ("Concatenate", [(2, 3), (2, 3)], {"axis": 2}),
    ("Split", [(2, 3)], {"axis": -3}),
    ("Stack", [(2, 3), (2, 3)], {"axis": 4}),
    ("Transpose", [(2, 3, 4)], {"axes": (0, 1, 3)}),
    ("Flip", [(2, 3)], {"axes": (2,)}),
    ("Sort", [(2, 3)], {"axis": 2}),
    ("Gather", [(2, 3), (4,)], {"axis": 2}),
    ("ScatterAdd", [(2, 3), (2, 3), (2, 3)], {"axis": 5}),
])
def test_out_of_range_axes_raise(name, in_shapes, kwargs):
    with pytest.raises(ValueError, match=r"expected an axis in \[") as info:
        _infer(name, in_shapes, **kwargs)
    assert SPECS[name].api_name in str(info.value)


@pytest.mark.parametrize("name, in_shapes, kwargs, fragment", [
    ("Stack", [(2, 3), (3, 2)], {}, "equal shapes"),
    ("Transpose", [(2, 3, 4)], {"axes": (0, 1)}, "permutation"),
    ("Transpose", [(2, 3, 4)], {"axes": (0, 1, 1)}, "distinct"),
    ("Slice", [(2, 3)], {"step": (1, 0)}, "non-zero"),
    ("Slice", [(2, 3)], {"start": (0, 0, 0)}, "at most 2"),
    ("Pad", [(2, 3)], {"pad_width": (1, 2, 3)}, "even number"),
    ("Pad", [(2, 3)], {"pad_width": (1, 1, 1, 1, 1, 1)}, "at most 4"),
    ("Pad", [(2, 3)], {"pad_width": (1, -1)}, "non-negative"),
    ("Broadcast", [(2, 3)], {"shape": (4, 3)}, "broadcasts to"),
    ("Broadcast", [(2, 3)], {"shape": (3,)}, "broadcasts to"),
    ("BroadcastTo", [(2, 3, 4), (3, 5)], {}, "x.shape"),
    ("Tile", [(2, 3)], {"reps": (0, 2)}, "positive"),
    ("OneHot", [(4, 2)], {"shape": (3,)}, "one index per axis"),
    ("MatrixDiagPart", [(2, 3, 4)], {}, "square"),
    ("BatchInv", [(3, 3)], {}, "batch, n, n"),
    ("Gather", [(2, 3, 4), (3, 5)], {"axis": 2, "batch_dims": 1}, "batch axes"),
    ("GatherNd", [(2, 3), (3, 4)], {}, "m <= x.ndim"),
    ("ScatterNd", [(3,), (1, 3), None], {}, "'out' is not given"),
    ("ScatterNd", [(4,), (1, 3), None], {"shape": (5,)}, "indices.shape"),
])
def test_bad_shapes_and_arguments_raise_naming_the_argument(name, in_shapes, kwargs, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        _infer(name, in_shapes, **kwargs)
    assert SPECS[name].api_name in str(info.value)


def test_bad_pad_mode_is_rejected():
    with pytest.raises(ValueError, match="one of"):
        bind_args(SPECS["Pad"], {"pad_width": (1, 1), "mode": "wrap"})


def _forward(name, inputs, args=None):
    case = Case(name, inputs, args or {})
    kernel, xs, _ = make_kernel(case, case.make_inputs(), np.float32)
    return kernel.forward(xs)


@pytest.mark.parametrize("name, inputs, args", [
    ("Gather", [Normal((2, 3)), Fixed(np.array([0, 3]))], {"axis": 1}),
    ("Gather", [Normal((2, 3)), Fixed(np.array([-1]))], {"axis": 1}),
    ("GatherNd", [Normal((2, 3)), Fixed(np.array([[0], [-4]]))], {}),
    ("ScatterNd", [Normal((1,)), Fixed(np.array([[5]])), None], {"shape": (5,)}),
    ("ScatterAdd", [Normal((2, 3)), Fixed(np.array([[3]])), Normal((1, 1))], {"axis": 1}),
])
def test_indices_out_of_range_raise_instead_of_reading_garbage(name, inputs, args):
    with pytest.raises(ValueError, match=r"expected indices in \[") as info:
        _forward(name, inputs, args)
    assert SPECS[name].api_name in str(info.value)


def test_split_reports_one_output_per_slice():
    _, shapes = _infer("Split", [(2, 3, 4)], axis=1)
    assert shapes == ((2, 4),) * 3


def test_slice_short_lists_apply_to_trailing_axes():
    args, shapes = _infer("Slice", [(2, 3, 4)], start=(1,), stop=(3,))
    assert args["start"] == (0, 0, 1) and shapes == ((2, 3, 2),)


def test_zero_size_arrays_work():
    assert _infer("Concatenate", [(0, 3), (2, 3)], axis=0)[1] == ((2, 3),)
    assert _infer("Reshape", [(0, 3)], shape=(3, 0))[1] == ((3, 0),)
    (y,) = _forward("Pad", [Normal((0, 3))], {"pad_width": (1, 1)})
    assert y.shape == (0, 5)


def test_slice_reads_none_items_as_the_full_range_in_the_step_direction():
    import nnabla as nn
    import nnabla.functions as F
    a = np.arange(24.0).reshape(2, 3, 4)
    x = nn.NdArray.from_numpy_array(a)
    np.testing.assert_array_equal(F.slice(x, [None, 1, None], [None, None, 3]).data, a[:, 1:, :3])
    np.testing.assert_array_equal(F.slice(x, [None] * 3, [None] * 3, [1, -1, -2]).data,
                                  a[:, ::-1, ::-2])


def test_one_hot_wraps_negative_indices_and_zeroes_rows_out_of_range_as_nnabla():
    (y,) = _forward("OneHot", [Fixed(np.array([[1, -1], [3, 0], [-3, 1]]))], {"shape": (3, 2)})
    expected = np.zeros((3, 3, 2), np.float32)
    expected[0, 1, 1] = 1          # -1 on an axis of size 2 is 1
    expected[2, 0, 1] = 1          # -3 on an axis of size 3 is 0; row 1 (index 3) stays zero
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("shape, axis", [((1, 6, 0), 1), ((2, 0, 3), 0), ((2, 3, 0), 2)])
def test_split_of_empty_pieces_raises_as_nnabla(shape, axis):
    # nnabla 1.39 raises RuntimeError ("Zero is specified as the input value" or "needs at
    # least 2 outputs") for these; an empty leading axis is fine there and here.
    import nnabla as nn
    import nnabla.functions as F
    with pytest.raises(RuntimeError, match=re.escape(f"F.split: input 'x' of shape {shape}")):
        F.split(nn.Variable(shape), axis=axis)
    assert [y.shape for y in F.split(nn.Variable((0, 2, 3)), axis=1)] == [(0, 3), (0, 3)]
