"""``nnabla.testing``: assertions for tests, and the clear-called flag recorder.

For backend authors: :mod:`nnabla.testing.function_cases` (a numpy-referenced case table
per function), :mod:`nnabla.testing.graph_semantics` and :mod:`nnabla.testing.backend_kit`
(``check_backend(name)``, ``python -m nnabla.testing.backend_kit NAME``); see
``docs/plugins.md``.
"""
from __future__ import annotations

import numpy as np

from . import clear_called_flag_recorder  # noqa: F401 - nnabla exposes it here


def assert_allclose(actual, desired, rtol=1e-05, atol=1e-06, equal_nan=True, err_msg="",
                    verbose=True):
    """``numpy.testing.assert_allclose`` with ``numpy.allclose``'s tolerances, as nnabla's.

    Also accepts NdArray and Variable (compared by their data).
    """
    np.testing.assert_allclose(_numpy(actual), _numpy(desired), rtol=rtol, atol=atol,
                               equal_nan=equal_nan, err_msg=err_msg, verbose=verbose)


def _numpy(v):
    from .._nd_array import NdArray
    from .._variable import Variable
    if isinstance(v, Variable):
        return v.d
    if isinstance(v, NdArray):
        return v.data
    return v
