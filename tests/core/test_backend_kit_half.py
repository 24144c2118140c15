"""The backend kit compares half element by element (as tests/functions does), not against
the largest value of the output."""
import numpy as np
import pytest
from nnabla.testing import backend_kit


def test_a_small_element_off_by_five_percent_fails_beside_a_large_one():
    expected = np.array([1000.0, 1.0, -2.0])
    got = expected * [1.0, 1.05, 1.0]
    # relative to max|expected| (the former rule) the 0.05 error would pass a 2e-2 tolerance
    assert abs(got[1] - expected[1]) < 2e-2 * np.abs(expected).max()
    with pytest.raises(AssertionError, match=r"1 of 3 elements .* at \(1,\)"):
        backend_kit._close(got, expected, 1e-5, 1e-4, "output 0", half=(1e-2, 0.0))


def test_the_floor_absorbs_cancellation_next_to_zero():
    expected = np.array([1.0, 1e-4])
    got = np.array([1.001, 5e-4])           # 4e-4 away from a value 1e4 times smaller
    backend_kit._close(got, expected, 1e-5, 1e-4, "output 0", half=(1e-2, 0.1))
    with pytest.raises(AssertionError, match="half_rtol=0.01"):
        backend_kit._close(got, expected, 1e-5, 1e-4, "output 0", half=(1e-2, 0.0))


def test_nan_and_infinity_match_only_themselves():
    backend_kit._close(np.array([np.nan, np.inf]), np.array([np.nan, np.inf]), 0, 0, "y",
                       half=(1e-2, 0.1))
    with pytest.raises(AssertionError):
        backend_kit._close(np.array([np.nan, 1.0]), np.array([1.0, 1.0]), 0, 0, "y",
                           half=(1e-2, 0.1))
    with pytest.raises(AssertionError, match="shape"):
        backend_kit._close(np.ones(2), np.ones(3), 0, 0, "y", half=(1e-2, 0.1))
