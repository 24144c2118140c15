"""Function objects (``Variable.parent``): context, arguments, in-place levels, and
PythonFunction's explicit-call API (testers call these on ``o.parent``)."""
import numpy as np

import nnabla as nn
import nnabla.functions as F
from nnabla.function import PythonFunction


class Add2(PythonFunction):
    """x0 + x1, whose backward reads no data."""

    def min_outputs(self):
        return 1

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return False

    def setup_impl(self, inputs, outputs):
        outputs[0].reset_shape(inputs[0].shape, True)

    def forward_impl(self, inputs, outputs):
        outputs[0].d = inputs[0].d + inputs[1].d

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        for x, down, add in zip(inputs, propagate_down, accum):
            if down:
                x.g = x.g + outputs[0].g if add else outputs[0].g


def test_function_context_is_the_context_it_was_created_in():
    x = nn.Variable((2, 3))
    ctx = nn.Context(backend=["cpu:float"], array_class="CpuCachedArray", device_id="1")
    with nn.context_scope(ctx):
        y = F.relu(x)
    assert str(y.parent.context) == str(ctx)
    with nn.context_scope(y.parent.context):
        z = F.relu(x)
    assert str(z.parent.context) == str(ctx)


def test_arguments_are_the_given_arguments_by_name():
    x = nn.Variable((10, 10))
    y = F.slice(x, (1, 2), (8, 9), (1, 2))
    assert y.parent.arguments == {"start": [1, 2], "stop": [8, 9], "step": [1, 2]}
    assert y.parent.arguments == y.parent.info.args


def test_inplace_levels_follow_nnabla():
    x = nn.Variable((2, 3), need_grad=True)
    assert F.reshape(x, (3, 2), inplace=True).parent.inplace_data(0) == 1
    assert F.reshape(x, (3, 2), inplace=False).parent.inplace_data(0) == 0
    # nnabla 1.39 ignores the other functions' (obsolete) inplace flags
    assert F.relu(x, inplace=True).parent.inplace_data(0) == 0
    assert F.add_scalar(x, 1, inplace=True).parent.inplace_data(0) == 0
    assert F.sin(x).parent.inplace_data(0) == 0
    assert F.sin(x).parent.need_grad and not F.sin(nn.Variable((2,))).parent.need_grad


def test_a_python_function_called_twice_makes_two_graph_nodes():
    add2 = Add2()
    a, b, c = (nn.Variable.from_numpy_array(np.full(3, v, np.float32), need_grad=True)
               for v in (1, 2, 10))
    y1 = add2(a, b)
    y2 = add2(F.identity(a), c)
    y1.forward()
    y2.forward()
    np.testing.assert_array_equal(y1.d, [3, 3, 3])
    np.testing.assert_array_equal(y2.d, [11, 11, 11])
    for v in (a, b, c):
        v.grad.zero()
    y1.backward(np.ones(3))
    np.testing.assert_array_equal(b.g, [1, 1, 1])
    assert not c.g.any()


def test_python_function_explicit_calls_accumulate_and_recompute():
    a = nn.Variable.from_numpy_array(np.ones(2, np.float32), need_grad=True)
    b = nn.Variable.from_numpy_array(np.full(2, 2, np.float32), need_grad=True)
    y = Add2()(a, b)
    f = y.parent
    assert not f.need_setup_recompute(0)
    f.setup_recompute([a, b], [y])
    f.forward([a, b], [y])
    y.data.clear()
    f.recompute([a, b], [y])
    np.testing.assert_array_equal(y.d, [3, 3])
    a.g, b.g, y.g = np.full(2, 5), np.zeros(2), np.ones(2)
    f.backward([a, b], [y])                 # no accum given: every input accumulates
    np.testing.assert_array_equal(a.g, [6, 6])
    np.testing.assert_array_equal(b.g, [1, 1])
    assert str(f.context) == str(nn.get_current_context()) and f.arguments == {}
