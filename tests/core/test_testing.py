"""nnabla.testing: nnabla's tolerances; the clear-called recorder (tests/api has its cases)."""
import numpy as np
import pytest

from nnabla.testing import assert_allclose, clear_called_flag_recorder


def test_assert_allclose_uses_numpy_allclose_tolerances():
    assert_allclose(np.ones(2), np.ones(2) + 5e-7)        # within atol=1e-6
    assert_allclose(np.full(2, 1e3), np.full(2, 1e3) * (1 + 5e-6))  # within rtol=1e-5
    with pytest.raises(AssertionError):
        assert_allclose(np.ones(2), np.ones(2) + 1e-4)


def test_clear_called_flag_recorder_records_only_while_active():
    import nnabla as nn
    import nnabla.functions as F
    y = F.add_scalar(F.identity(nn.Variable((2,), need_grad=True)))
    y.forward(clear_no_need_grad=True)
    assert clear_called_flag_recorder.get_input_clear_called_flags() == []
    clear_called_flag_recorder.activate_clear_called_flag_recorder()
    try:
        y.forward(clear_no_need_grad=True)
        assert clear_called_flag_recorder.get_input_clear_called_flags() == [
            [(False, False)], [(True, False)]]
    finally:
        clear_called_flag_recorder.deactivate_clear_called_flag_recorder()
    assert clear_called_flag_recorder.get_output_clear_called_flags() == []
