"""A kernel's ``forward_ufunc`` (see nnabla.kernel.Kernel): the cpu kernels that declare it
compute exactly what their ``forward`` does, the engine's one-input paths (imperative,
auto-forward, static plans) call it instead of ``forward``, and a malformed declaration is
refused with the kernel's name."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla import _execute, _native_graph
from nnabla._state import clear_caches
from nnabla.function_spec import SPECS
from nnabla_ext.cpu.kernels import CPU_KERNELS, arithmetic

DECLARING = ("AddScalar", "MulScalar", "MaximumScalar", "MinimumScalar")
VALUES = np.array([0.0, -0.0, 1.5, -2.25, 3e38, -3e38, 1e-40, np.inf, -np.inf, np.nan],
                  dtype=np.float32)


def _kernel(name, val):
    cls = arithmetic.KERNELS[name]
    return cls(SPECS[name], {"val": val, "inplace": False}, [VALUES.shape], [VALUES.shape])


@pytest.mark.parametrize("name", DECLARING)
@pytest.mark.parametrize("val", [0.0, 2.5, -1.0, float("nan")])
def test_the_declared_ufunc_computes_the_forward_bit_for_bit(name, val):
    kernel = _kernel(name, val)
    f, *operands = _execute.direct_forward(kernel, SPECS[name])
    with np.errstate(all="ignore"):         # inf * 0, overflow: the same warnings either way
        expected = kernel.forward([VALUES.copy()])[0]
        got = f(VALUES.copy(), *operands)
    assert got.dtype == expected.dtype == np.float32
    assert got.tobytes() == expected.tobytes()


def test_kernels_without_the_declaration_keep_forward():
    assert _execute.direct_forward(_kernel("RSubScalar", 1.0), SPECS["RSubScalar"]) is None


def test_a_malformed_declaration_is_refused_with_the_kernels_name():
    kernel = _kernel("AddScalar", 1.0)
    for bad in (np.add, (), ("add", 1.0), (np.add,) + (1.0,) * 8):
        kernel.forward_ufunc = bad
        with pytest.raises(TypeError, match=r"AddScalar.*forward_ufunc must be a tuple"):
            _execute.direct_forward(kernel, SPECS["AddScalar"])
    with pytest.raises(TypeError, match="ufunc must be None or"):
        _native_graph.UnaryRunner((None, None), None, None, (), (None, None), 0, None,
                                  ("add", 1.0))
    # the limit both checks share: 7 operands are taken, 8 refused (above)
    assert _native_graph.MAX_UFUNC_OPERANDS == 7
    kernel.forward_ufunc = (np.add,) + (1.0,) * 7
    assert _execute.direct_forward(kernel, SPECS["AddScalar"]) == kernel.forward_ufunc
    with pytest.raises(TypeError, match="at most 7 operands"):
        _native_graph.UnaryRunner((None, None), None, None, (), (None, None), 0, None,
                                  (np.add,) + (1.0,) * 8)


def test_every_one_input_path_calls_the_ufunc_instead_of_forward(monkeypatch):
    def refuse(self, xs):
        raise AssertionError("forward called")
    monkeypatch.setattr(CPU_KERNELS["AddScalar"], "forward", refuse)
    clear_caches()                  # no runner or plan made before the patch is reused
    try:
        a = nn.NdArray.from_numpy_array(np.arange(6, dtype=np.float32).reshape(2, 3))
        for _ in range(2):          # the general path, then the wrapper's call site
            assert F.add_scalar(a, 1.5).data.tolist() == [[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]
        x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32))
        with nn.auto_forward():
            for _ in range(2):
                assert F.add_scalar(x, 2.0).d.tolist() == [[3.0] * 3] * 2
        y = F.mul_scalar(F.add_scalar(x, 1.0), 3.0)     # a static graph
        y.forward()
        assert y.d.tolist() == [[6.0] * 3] * 2
        with pytest.raises(AssertionError, match="forward called"):   # the general path
            F.add_scalar(a, 1.0, outputs=[nn.NdArray((2, 3))])
    finally:
        monkeypatch.undo()
        clear_caches()
