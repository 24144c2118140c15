"""Spec flag keeps_inputs (nnabla's prohibit_clear_input_buffers): F.sink's inputs survive."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


@pytest.fixture
def graph():
    x = nn.Variable.from_numpy_array(np.ones((2, 3), np.float32)).apply(need_grad=True)
    y = F.identity(F.mul_scalar(F.identity(x), 2.0))
    return x, y, F.sink(y)


def test_sink_inputs_survive_forward_with_clear_no_need_grad(graph):
    _, y, sink = graph
    assert sink.parent.spec.keeps_inputs
    sink.forward(clear_no_need_grad=True)
    np.testing.assert_allclose(y.d, np.full((2, 3), 2.0))


def test_sink_inputs_survive_backward_with_clear_buffer(graph):
    x, y, sink = graph
    sink.forward(clear_no_need_grad=True)
    x.grad.zero()
    sink.backward(clear_buffer=True)
    np.testing.assert_allclose(y.d, np.full((2, 3), 2.0))
    np.testing.assert_allclose(x.g, np.full((2, 3), 2.0))
