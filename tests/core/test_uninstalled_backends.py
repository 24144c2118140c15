"""A context naming a backend no plugin provides runs on its next installed backend, as in
nnabla (a .nnp saved with a cudnn context runs on the CPU); with none installed it raises
naming what to install. Strict mode makes the fallback an error."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
from nnabla.ext_utils import set_strict_fallback

GPU_LIKE = nn.Context(["nosuchgpu:float", "cpu:float"])


def test_functions_and_solvers_fall_through_to_the_installed_backend():
    with nn.context_scope(GPU_LIKE):
        y = F.add_scalar(nn.NdArray.from_numpy_array(np.ones(2, np.float32)), 1.0)
        w = nn.Variable.from_numpy_array(np.ones(3, np.float32), need_grad=True)
        solver = S.Sgd(0.5)
        solver.set_parameters({"w": w})
        w.g = 1
        solver.update()
    np.testing.assert_array_equal(y.data, [2, 2])
    np.testing.assert_array_equal(w.d, [0.5, 0.5, 0.5])


def test_no_installed_backend_raises_naming_it():
    with pytest.raises(ValueError, match="nosuchgpu"):
        with nn.context_scope(nn.Context(["nosuchgpu:float"])):
            F.add_scalar(nn.NdArray.from_numpy_array(np.ones(2, np.float32)), 1.0)


def test_strict_mode_refuses_the_fallback():
    set_strict_fallback(True)
    try:
        with pytest.raises(NotImplementedError, match="'nosuchgpu' is not installed"):
            with nn.context_scope(GPU_LIKE):
                F.add_scalar(nn.NdArray.from_numpy_array(np.ones(2, np.float32)), 3.0)
    finally:
        set_strict_fallback(False)
