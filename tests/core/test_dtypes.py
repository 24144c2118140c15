"""nnabla.dtypes: nnabla's dtype codes for NNP arguments."""
import numpy as np

import nnabla.dtypes as dtypes


def test_np_dtpye_to_int_gives_nnabla_codes():
    assert dtypes.np_dtpye_to_int[np.float32] == 11
    assert dtypes.np_dtpye_to_int[np.int32] == 5
    assert dtypes.np_dtpye_to_int[np.int64] == 9       # LONGLONG, as nnabla stores it
    assert dtypes.np_dtpye_to_int[bool] == 0


def test_int_to_np_dtype_inverts_the_codes():
    for code, t in dtypes.int_to_np_dtype.items():
        assert dtypes.np_dtpye_to_int[t] == code
