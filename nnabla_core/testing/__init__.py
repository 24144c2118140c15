"""``nnabla.testing``: assertions for tests."""
from __future__ import annotations

import numpy as np


def assert_allclose(actual, desired, rtol=1e-07, atol=0, equal_nan=True, err_msg="",
                    verbose=True):
    """``numpy.testing.assert_allclose`` that also accepts NdArray and Variable."""
    np.testing.assert_allclose(_numpy(actual), _numpy(desired), rtol=rtol, atol=atol,
                               equal_nan=equal_nan, err_msg=err_msg, verbose=verbose)


def _numpy(v):
    from ._nd_array import NdArray
    from ._variable import Variable
    if isinstance(v, Variable):
        return v.d
    if isinstance(v, NdArray):
        return v.data
    return v
