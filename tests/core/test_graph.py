"""Graph semantics: accumulation, need_grad, clear_buffer, persistent, hooks, unlinking."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F


def _var(values, need_grad=True):
    return nn.Variable.from_numpy_array(np.asarray(values, np.float32), need_grad=need_grad)


def test_leaf_gradients_accumulate_across_backward_calls():
    x = _var([1.0, 2.0])
    y = F.mul_scalar(x, 3.0)
    y.forward()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 6.0])


def test_intermediate_gradients_are_overwritten_each_pass():
    x = _var([1.0, 2.0])
    h = F.mul_scalar(x, 2.0)
    y = F.mul_scalar(h, 3.0)
    y.forward()
    y.backward()
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])
    np.testing.assert_allclose(x.g, [12.0, 12.0])


def test_a_variable_used_twice_sums_both_paths():
    x = _var([1.0, -2.0])
    h = F.mul_scalar(x, 2.0)
    y = F.add2(F.mul2(h, h), h)
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, 2 * (2 * 2 * np.array([1.0, -2.0]) + 1))


def test_backward_with_an_array_leaves_the_output_grad_unchanged():
    x = _var([1.0, 2.0])
    y = F.mul_scalar(x, 2.0)
    y.forward()
    y.g = 7.0
    y.backward(np.array([1.0, 3.0]))
    np.testing.assert_allclose(x.g, [2.0, 6.0])
    np.testing.assert_allclose(y.g, [7.0, 7.0])
    x.grad.zero()
    y.backward(None)                      # uses the current y.g
    np.testing.assert_allclose(x.g, [14.0, 14.0])


def test_need_grad_false_stops_propagation_and_leaves_are_untouched():
    x = _var([1.0, 2.0], need_grad=False)
    w = _var([3.0, 4.0])
    y = F.mul2(x, w)
    y.forward()
    y.backward()
    np.testing.assert_allclose(w.g, [1.0, 2.0])
    np.testing.assert_allclose(x.g, [0.0, 0.0])
    h = F.mul_scalar(w, 2.0)
    h.need_grad = False
    z = F.mul_scalar(h, 5.0)
    z.forward()
    w.grad.zero()
    z.backward()
    np.testing.assert_allclose(w.g, [0.0, 0.0])


def test_need_grad_set_after_building_the_graph_is_honoured():
    x = _var([1.0, 2.0], need_grad=False)
    y = F.mul_scalar(F.mul_scalar(x, 2.0), 3.0)
    x.need_grad = True
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [6.0, 6.0])


def test_other_outputs_of_a_multi_output_function_count_as_zero_gradient():
    x = _var(np.arange(6.0).reshape(2, 3))
    a, b = F.split(x, axis=0)
    a.forward()
    b.g = 100.0
    a.backward()
    np.testing.assert_allclose(x.g, [[1, 1, 1], [0, 0, 0]])


def test_clear_buffer_in_forward_then_backward_raises_instead_of_wrong_grads():
    x = _var([1.0, 2.0])
    h = F.tanh(F.mul_scalar(x, 2.0))
    y = F.tanh(h)
    y.forward(clear_buffer=True)
    assert y.d is not None
    with pytest.raises(RuntimeError, match="cleared"):
        y.backward()


def test_clear_no_need_grad_keeps_what_backward_needs():
    x = _var([0.1, 0.2])
    y = F.tanh(F.tanh(F.mul_scalar(x, 2.0)))
    y.forward(clear_no_need_grad=True)
    y.backward()
    t1 = np.tanh(2 * np.array([0.1, 0.2]))
    np.testing.assert_allclose(x.g, (1 - np.tanh(t1) ** 2) * (1 - t1 ** 2) * 2, rtol=1e-5)


def test_persistent_survives_clear_buffer():
    x = _var([1.0, 2.0])
    h = F.mul_scalar(x, 2.0)
    h.persistent = True
    k = F.add_scalar(h, 1.0)
    y = F.mul_scalar(k, 3.0)
    y.forward(clear_buffer=True)
    np.testing.assert_allclose(h.d, [2.0, 4.0])
    assert k.data.clear_called


def test_forward_all_and_hooks_see_every_function_in_order():
    x = _var([1.0])
    h = F.add_scalar(x, 1.0)
    y, z = F.mul_scalar(h, 2.0), F.mul_scalar(h, 3.0)
    seen = []
    nn.forward_all([y, z], function_pre_hook=lambda f: seen.append(("pre", f.info.type_name)),
                   function_post_hook=lambda f: seen.append(("post", f.info.type_name)))
    assert seen[:2] == [("pre", "AddScalar"), ("post", "AddScalar")]
    assert len(seen) == 6
    np.testing.assert_allclose((y.d, z.d), ([4.0], [6.0]))


def test_backward_across_an_unlinked_graph_with_grad_none():
    x = _var([1.0, 2.0])
    y1 = F.mul_scalar(x, 2.0)
    x2 = y1.get_unlinked_variable(need_grad=True)
    y2 = F.mul_scalar(x2, 5.0)
    y1.forward()
    y2.forward()
    y2.backward()
    np.testing.assert_allclose(x2.g, [5.0, 5.0])
    y1.backward(grad=None)
    np.testing.assert_allclose(x.g, [10.0, 10.0])
    assert x2 == y1 and hash(x2) == hash(y1)


def test_rewire_on_puts_a_graph_on_top_of_another():
    xa = nn.Variable((2,), need_grad=True)
    ya = F.mul_scalar(xa, 3.0)
    xb = _var([1.0, 2.0])
    yb = F.add_scalar(xb, 1.0)
    xa.rewire_on(yb)
    ya.forward()
    np.testing.assert_allclose(ya.d, [6.0, 9.0])
    ya.backward()
    np.testing.assert_allclose(xb.g, [3.0, 3.0])


def test_visit_walks_functions_in_forward_order_and_visit_check_stops():
    x = _var([1.0])
    y = F.tanh(F.mul_scalar(F.add_scalar(x, 1.0), 2.0))
    names = []
    y.visit(lambda f: names.append(f.name))
    assert names == ["AddScalar", "MulScalar", "Tanh"]
    assert y.visit_check(lambda f: f.name == "MulScalar")
    assert not y.visit_check(lambda f: f.name == "ReLU")


def test_function_exposes_info_inputs_outputs_and_args():
    x = _var([1.0, 2.0])
    y = F.add_scalar(x, 2.5)
    f = y.parent
    assert f.info.type_name == "AddScalar"
    assert f.info.args["val"] == 2.5 and f.args == {"val": 2.5, "inplace": False}
    assert f.inputs[0] is x and f.outputs[0] is y
    assert x.function_references == [f]


def test_static_plan_is_reused_and_rebuilt_when_the_graph_changes():
    from nnabla import _graph
    x = _var([1.0])
    y = F.add_scalar(x, 1.0)
    y.forward()
    plan = _graph.get_plan([y._node])
    y.forward()
    assert _graph.get_plan([y._node]) is plan
    x2 = _var([5.0])
    y.parent.inputs[0].rewire_on(x2)
    y.forward()
    np.testing.assert_allclose(y.d, [6.0])


def test_reset_shape_propagates_through_the_graph_on_forward():
    x = nn.Variable((2, 3))
    y = F.sum(F.mul_scalar(x, 2.0), axis=1)
    x.reset_shape((4, 3), force=True)
    x.d = 1.0
    y.forward()
    np.testing.assert_allclose(y.d, [6.0] * 4)


def test_clear_all_graph_links_truncates_backprop():
    x = _var([1.0])
    h = F.mul_scalar(x, 2.0)
    y = F.mul_scalar(h, 3.0)
    with nn.auto_forward():
        pass
    h.clear_all_graph_links()
    assert h.parent is None
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [0.0])


def test_deep_chain_has_no_recursion_limit():
    x = _var([0.0])
    h = x
    for _ in range(5000):
        h = F.add_scalar(h, 1.0)
    h.forward(clear_buffer=True)
    h.backward()
    np.testing.assert_allclose(h.d, [5000.0])
    np.testing.assert_allclose(x.g, [1.0])


def test_grad_builds_gradient_graphs_without_touching_inputs():
    x = _var([1.0, 2.0])
    x.g = 9.0
    y = F.mul2(x, x)
    (dx,) = nn.grad([y], [x])
    dx.forward()
    np.testing.assert_allclose(dx.d, [2.0, 4.0])
    np.testing.assert_allclose(x.g, [9.0, 9.0])
    (ddx,) = nn.grad([F.sum(F.mul2(dx, dx))], [x])     # d/dx sum((2x)^2) = 8x
    ddx.forward()
    np.testing.assert_allclose(ddx.d, [8.0, 16.0])


def test_grad_without_a_registered_backward_function_is_first_order_only(monkeypatch):
    from nnabla.backward_functions import registry
    if "Sin" in registry:
        monkeypatch.delitem(registry, "Sin")
    x = _var([0.3, -0.2])
    y = F.sin(x)
    (dx,) = nn.grad([y], [x])
    dx.forward()
    np.testing.assert_allclose(dx.d, np.cos([0.3, -0.2]), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="F.sin: no backward function"):
        nn.grad([dx], [x])[0].forward()


def test_python_function_mul2_from_the_reference():
    from nnabla.function import PythonFunction

    class Mul2(PythonFunction):
        def __init__(self, ctx):
            super().__init__(ctx)

        @property
        def name(self):
            return self.__class__.__name__

        def min_outputs(self):
            return 1

        def setup_impl(self, inputs, outputs):
            outputs[0].reset_shape(inputs[0].shape, True)

        def forward_impl(self, inputs, outputs):
            outputs[0].data.copy_from(F.mul2(inputs[0].data, inputs[1].data))

        def backward_impl(self, inputs, outputs, propagate_down, accum):
            x0, x1 = inputs[0].data, inputs[1].data
            dx0, dx1, dy = inputs[0].grad, inputs[1].grad, outputs[0].grad
            if propagate_down[0]:
                if accum[0]:
                    dx0 += F.mul2(dy, x1)
                else:
                    dx0.copy_from(F.mul2(dy, x1))
            if propagate_down[1]:
                if accum[1]:
                    dx1 += F.mul2(dy, x0)
                else:
                    dx1.copy_from(F.mul2(dy, x0))

    a, b = _var([1.0, 2.0]), _var([3.0, 4.0])
    y = Mul2(None)(a, b)
    z = F.mul_scalar(y, 2.0)
    z.forward()
    np.testing.assert_allclose(z.d, [6.0, 16.0])
    z.backward()
    np.testing.assert_allclose(a.g, [6.0, 8.0])
    np.testing.assert_allclose(b.g, [2.0, 4.0])


def test_function_forward_and_backward_can_be_called_explicitly_with_accum():
    x = _var([1.0, 2.0])
    y = F.mul_scalar(x, 3.0)
    f = y.parent
    f.setup([x], [y])
    f.forward([x], [y])
    np.testing.assert_allclose(y.d, [3.0, 6.0])
    y.g = 1.0
    x.g = 1.0
    f.backward([x], [y], accum=[True])
    np.testing.assert_allclose(x.g, [4.0, 4.0])
    f.backward([x], [y], accum=[False])
    np.testing.assert_allclose(x.g, [3.0, 3.0])


def test_recompute_variables_are_cleared_in_forward_and_rebuilt_for_backward():
    x = _var([0.1, 0.2])
    h = F.tanh(x)
    h.recompute = True
    y = F.tanh(F.mul_scalar(h, 2.0))
    y.forward()
    assert h.data.clear_called
    y.backward()
    t = np.tanh(np.array([0.1, 0.2]))
    expected = (1 - np.tanh(2 * t) ** 2) * 2 * (1 - t ** 2)    # the exact gradient
    np.testing.assert_allclose(x.g, expected, rtol=1e-5)


def test_recompute_replays_the_same_dropout_mask():
    x = _var(np.ones(1000))
    h = F.dropout(x, p=0.5)
    h.recompute = True
    y = F.mul_scalar(F.mul2(h, h), 1.0)
    y.forward()
    y.backward()
    g = x.g.copy()
    assert set(np.unique(g)) <= {0.0, 8.0} and 0 < (g == 0).sum() < 1000


def test_backward_through_a_mask_skips_non_differentiable_functions():
    x = _var([-1.0, 2.0])
    y = F.mul2(x, F.greater_scalar(x, 0.0))
    y.forward()
    y.backward()
    np.testing.assert_allclose(x.g, [0.0, 1.0])


def test_sink_without_one_input_grad_propagates_the_gradients_set_on_its_inputs():
    x = _var([1.0, 2.0])
    a, b = F.mul_scalar(x, 2.0), F.mul_scalar(x, 3.0)
    s = F.sink(a, b, one_input_grad=False)
    s.forward()
    a.g = np.array([1.0, 10.0])
    b.g = np.array([100.0, 1000.0])
    s.backward()
    np.testing.assert_allclose(x.g, [2 * 1 + 3 * 100, 2 * 10 + 3 * 1000])


def test_clear_no_need_grad_keeps_the_inputs_a_python_function_backward_reads():
    from nnabla.function import PythonFunction

    class Square(PythonFunction):
        def setup_impl(self, inputs, outputs):
            outputs[0].reset_shape(inputs[0].shape, True)

        def forward_impl(self, inputs, outputs):
            outputs[0].d = inputs[0].d ** 2

        def backward_impl(self, inputs, outputs, propagate_down, accum):
            g = 2 * inputs[0].d * outputs[0].g
            inputs[0].g = inputs[0].g + g if accum[0] else g

        def grad_depends_input_data(self, i, j):
            return True

        def grad_depends_output_data(self, i, o):
            return False

    x = _var([1.0, 3.0])
    h = F.mul_scalar(x, 2.0)            # an intermediate the Python backward reads
    y = F.mul_scalar(Square()(h), 1.0)
    y.forward(clear_no_need_grad=True)
    y.backward()
    np.testing.assert_allclose(x.g, [8.0, 24.0])        # d/dx (2x)^2 = 8x


def test_graph_outputs_may_be_given_ndarrays_to_write_into():
    x = _var([1.0, 2.0])
    target = nn.NdArray((2,))
    y = F.mul_scalar(x, 3.0, outputs=[target])
    y.forward()
    np.testing.assert_allclose(target.data, [3.0, 6.0])


def test_need_grad_set_on_an_intermediate_receives_gradients_even_without_grad_leaves():
    x = _var([1.0, 2.0], need_grad=False)
    h = F.mul_scalar(x, 2.0)
    h.need_grad = True
    y = F.mul_scalar(h, 3.0)
    y.forward()
    y.backward()
    np.testing.assert_allclose(h.g, [3.0, 3.0])
