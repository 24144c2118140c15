"""nnabla.normalization_functions: the helpers nnabla exposes under these names."""
import numpy as np

from nnabla.normalization_functions import _apply_affine, _force_list, _get_axes_excluding


def test_force_list_wraps_scalars_and_lists_iterables():
    assert _force_list(2) == [2]
    assert _force_list((0, 1)) == [0, 1]
    assert _force_list([3]) + [1] == [3, 1]


def test_axes_excluding_understands_negative_axes():
    assert _get_axes_excluding(4, 1) == [0, 2, 3]
    assert _get_axes_excluding(4, [0, -1]) == [1, 2]


def test_apply_affine_scales_then_shifts_and_skips_none():
    x = np.arange(3.0)
    np.testing.assert_allclose(_apply_affine(x, scale=2.0, bias=1.0), [1.0, 3.0, 5.0])
    np.testing.assert_allclose(_apply_affine(x), x)
    np.testing.assert_allclose(x, np.arange(3.0))   # the input is left as it was
