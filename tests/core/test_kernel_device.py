"""Kernels learn the context's device (``Kernel.device_id``), and calls on different
devices never share a kernel or a memoised runner."""
import numpy as np
import nnabla as nn
import nnabla.functions as F
from nnabla import _dispatch
from nnabla.context import Context


def _ctx(device_id):
    return Context(backend=["cpu:float"], array_class="CpuCachedArray", device_id=device_id)


def test_graph_kernels_carry_the_context_device():
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32))
    with nn.context_scope(_ctx("3")):
        y = F.tanh(x)
    with nn.context_scope(_ctx("5")):
        z = F.tanh(x)
    assert y.parent.kernel.device_id == "3"
    assert z.parent.kernel.device_id == "5"


def test_imperative_runners_are_kept_per_device():
    _dispatch.imperative_runners.clear()
    x = nn.NdArray.from_numpy_array(np.ones(4, np.float32))
    for device in ("1", "2", "1", "2"):
        with nn.context_scope(_ctx(device)):
            np.testing.assert_array_equal(F.add_scalar(x, 2.0).data, np.full(4, 3.0))
    devices = {key[4] for key in _dispatch.imperative_runners if key[0] == "AddScalar"}
    assert devices == {"1", "2"}
