"""The engine binds kernels and solvers to ``family.for_device(ctx.device_id)``: a plugin
with several devices gives each device a family of its own (nnabla_ext.cuda does)."""
import numpy as np
import nnabla as nn
import nnabla.functions as F
import nnabla.solvers as S
from nnabla import _dispatch
from nnabla.array_family import HOST, ArrayFamily
from nnabla.context import Context
from nnabla.plugins import resolve


class _Namespace:
    """numpy, as a distinct object (a kernel's ``xp`` tells which family bound it)."""

    def __getattr__(self, name):
        return getattr(np, name)


def test_default_family_is_the_same_for_every_device():
    assert HOST.for_device("0") is HOST and HOST.for_device("3") is HOST


def test_kernels_and_solvers_bind_to_the_device_family(monkeypatch):
    other = ArrayFamily("cpu", array_type=np.ndarray, xp=_Namespace(), to_numpy=np.array,
                        from_numpy=np.array)
    monkeypatch.setattr(HOST, "for_device", lambda d: other if d == "7" else HOST,
                        raising=False)
    resolve._memo.clear()
    _dispatch.imperative_runners.clear()
    try:
        x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32))
        with nn.context_scope(Context(["cpu:float"], "CpuCachedArray", "7")):
            y = F.tanh(x)
            solver = S.Sgd(0.1)
        with nn.context_scope(Context(["cpu:float"], "CpuCachedArray", "0")):
            z = F.tanh(x)
        assert y.parent.family is other and y.parent.kernel.xp is other.xp
        assert z.parent.family is HOST
        assert solver._family is other
        y.forward()
        np.testing.assert_allclose(y.d, np.tanh(np.ones((2, 3))), rtol=1e-6)
    finally:
        resolve._memo.clear()
        _dispatch.imperative_runners.clear()
