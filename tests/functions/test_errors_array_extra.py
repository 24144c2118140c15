"""Bad input to the extra array functions raises errors naming function and argument."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla._spec import SPECS
from nnabla._spec.binding import bind_args, infer


def _infer(name, in_shapes, **kwargs):
    spec = SPECS[name]
    return infer(spec, in_shapes, bind_args(spec, kwargs))


@pytest.mark.parametrize("name, shapes, args, fragments", [
    ("TopKData", [(4, 5)], {"k": 6}, ("F.top_k_data", "'k'", "[1, 5]")),
    ("TopKData", [(4, 5)], {"k": 2, "reduce": False, "with_index": True},
     ("F.top_k_data", "'reduce'")),
    ("TopKData", [(4, 5)], {"k": 2, "base_axis": 2}, ("'base_axis'",)),
    ("TopKGrad", [(4, 5)], {"k": 0}, ("F.top_k_grad", "'k'")),
    ("Einsum", [(2, 3), (4, 5)], {"equation": "ij,jk->ik"}, ("F.einsum", "x[1]", "'j'")),
    ("Einsum", [(2, 3)], {"equation": "ij,jk->ik"}, ("'equation'", "1 operand")),
    ("Einsum", [(2, 3)], {"equation": "ijk->i"}, ("'equation'", "x[0] has 2 dimensions")),
    ("Einsum", [(2, 3)], {"equation": "ij->ik"}, ("'equation'", "output subscripts")),
    ("Einsum", [(2, 3, 4)], {"equation": "...j->j"}, ("'...' in the output",)),
    ("Unique", [(2, 3)], {"flatten": False}, ("F.unique", "'axis'")),
    ("Unique", [(2, 3)], {"flatten": False, "axis": 2}, ("'axis'",)),
    ("BoolGather", [(2, 3, 4), (3, 2)], {}, ("F.bool_gather", "'mask'", "(2, 3)")),
    ("BoolScatter", [(4, 2), (2, 3), (2, 3)], {}, ("F.bool_scatter", "'output'", "(2, 3, 2)")),
    ("BoolFill", [(2, 3), (2,)], {}, ("F.bool_fill", "'mask'")),
    ("PackPaddedSequence", [(4, 3), (2,)], {}, ("F.pack_padded_sequence", "'lengths'", "(3,)")),
    ("PackPaddedSequence", [(4,), (4,)], {}, ("'padded_sequence'",)),
    ("PadPackedSequence", [(7, 2), (4, 1)], {}, ("F.pad_packed_sequence", "'batch_sizes'")),
    ("BatchCholesky", [(2, 3, 4)], {}, ("F.batch_cholesky", "(batch, n, n)")),
])
def test_bad_shapes_and_arguments_name_the_function_and_argument(name, shapes, args, fragments):
    with pytest.raises(ValueError) as info:
        _infer(name, shapes, **args)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_bool_scatter_with_too_few_rows_for_the_mask_raises_in_the_kernel():
    rows = nn.NdArray.from_numpy_array(np.ones((1, 2), np.float32))
    mask = nn.NdArray.from_numpy_array(np.array([1., 0., 1.], np.float32))
    with pytest.raises(ValueError, match="F.bool_scatter.*one row per non-zero"):
        F.bool_scatter(rows, mask)
