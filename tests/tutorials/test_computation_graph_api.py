"""Examples of the computation-graph API reference (api-computation-graph.txt and the Variable
section of nnabla-python-docs.txt): forward_all, no_grad, backward across unlinked graphs,
visit_check and rewire_on."""
import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.initializer as I
import nnabla.parametric_functions as PF


def test_forward_all_computes_both_outputs_of_a_shared_input():
    x = nn.Variable.from_numpy_array(np.array([[1, 2], [3, 4]]))
    y = PF.affine(x, 4, name="y")
    z = PF.affine(x, 8, name="z")
    nn.forward_all([y, z], clear_buffer=True)
    params = nn.get_parameters()
    for out, name in ((y, "y"), (z, "z")):
        expected = x.d @ params[f"{name}/affine/W"].d + params[f"{name}/affine/b"].d
        np.testing.assert_allclose(out.d, expected, rtol=1e-6)


def test_no_grad_builds_parametric_functions_whose_parameters_need_no_gradient():
    x = nn.Variable((2, 3))
    with nn.no_grad():
        output0 = PF.affine(x, 4, name="net0")
    output1 = PF.affine(output0, 2, name="net1")
    assert not output0.need_grad and output1.need_grad
    assert not output0.parent.inputs[1].need_grad
    assert output1.parent.inputs[1].need_grad


def conv_net(x, initializer, unlink):
    y0 = PF.convolution(x, outmaps=64, kernel=(3, 3), pad=(1, 1), stride=(2, 2),
                        w_init=initializer, name="conv1", with_bias=False)
    y1 = F.relu(y0)
    y2 = PF.convolution(y1, outmaps=128, kernel=(3, 3), pad=(1, 1), stride=(2, 2),
                        w_init=initializer, name="conv2", with_bias=False)
    y3 = F.relu(y2)
    y3_unlinked = y3.get_unlinked_variable() if unlink else y3
    y4 = F.average_pooling(y3_unlinked, kernel=y3_unlinked.shape[2:])
    y5 = PF.affine(y4, 1, w_init=initializer)
    loss = F.mean(F.abs(y5 - 1.))
    return y3, y3_unlinked, loss


def test_backward_accumulates_and_crosses_an_unlinked_variable_with_grad_none():
    initializer = I.UniformInitializer((-0.1, 0.1), rng=np.random.RandomState(217))
    x = nn.Variable((8, 3, 32, 32))
    x.d = np.random.random(x.shape)  # random input, just for example.
    _, _, loss = conv_net(x, initializer, unlink=False)
    loss.forward()
    w = nn.get_parameters()["conv1/conv/W"]
    assert not np.any(w.g)
    loss.backward()
    once = w.g.copy()
    loss.backward()  # execute again.
    np.testing.assert_allclose(w.g, 2 * once, rtol=1e-6)
    nn.clear_parameters()
    initializer = I.UniformInitializer((-0.1, 0.1), rng=np.random.RandomState(217))
    y3, y3_unlinked, loss = conv_net(x, initializer, unlink=True)
    y3.forward()  # you need to execute forward at the unlinked variable first.
    loss.forward()  # Then execute forward at the leaf variable.
    loss.backward()  # works, but backpropagation stops at y3_unlinked.
    assert not np.any(nn.get_parameters()["conv1/conv/W"].g)
    y3.backward(grad=None)  # By this, it can take over the gradient held by y3_unlinked.
    np.testing.assert_allclose(nn.get_parameters()["conv1/conv/W"].g, once, rtol=1e-5, atol=1e-8)


def network_graph(x, add_avg_pool=False, maps=16, test=False):
    h = x
    h = PF.convolution(h, maps, kernel=(3, 3), pad=(1, 1), name="first-conv", with_bias=False)
    if add_avg_pool:
        h = F.average_pooling(h, h.shape[2:])
    else:
        h = F.relu(h)
    pred = PF.affine(h, 10, name="pred")
    return pred


class PrintFunc(object):
    def __call__(self, nnabla_func):
        if nnabla_func.info.type_name == "AveragePooling":
            print("{} exists in the graph".format(nnabla_func.info.type_name))
            return True
        else:
            return False


def test_visit_check_stops_at_the_first_function_returning_true(capsys):
    x = nn.Variable([1, 3, 16, 16])
    output = network_graph(x, add_avg_pool=True)  # Adding AveragePooling function to the graph
    assert output.visit_check(PrintFunc()) is True
    nn.clear_parameters()
    output = network_graph(x, add_avg_pool=False)
    assert output.visit_check(PrintFunc()) is False
    assert capsys.readouterr().out == "AveragePooling exists in the graph\n"


def test_rewire_on_puts_graph_a_on_top_of_graph_b():
    xa = nn.Variable((2, 8), need_grad=True)
    ya = F.tanh(PF.affine(xa, 10, name='a'))
    xb = nn.Variable((2, 16), need_grad=True)
    yb = F.tanh(PF.affine(F.tanh(PF.affine(xb, 8, name='b1')), 8, name='b2'))
    xa.rewire_on(yb)
    xb.d = 1
    ya.forward()
    ya.backward()
    p = {k: v.d for k, v in nn.get_parameters().items()}
    hb = np.tanh(np.tanh(np.ones((2, 16)) @ p["b1/affine/W"] + p["b1/affine/b"])
                 @ p["b2/affine/W"] + p["b2/affine/b"])
    np.testing.assert_allclose(ya.d, np.tanh(hb @ p["a/affine/W"] + p["a/affine/b"]), rtol=1e-5)
    assert xa.parent is not None and np.any(nn.get_parameters()["b1/affine/W"].g)
