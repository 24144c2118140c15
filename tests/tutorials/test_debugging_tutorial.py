"""The "Debugging" tutorial (nnabla-python-docs.txt, from line 1744): visit, pprint, viewer,
profiler and NaN/Inf tracer, on the CPU and with smaller images where the output allows it."""
import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
import nnabla.solvers as S



def block(x, maps, test=False, name="block"):
    h = x
    with nn.parameter_scope(name):
        with nn.parameter_scope("in-block-1"):
            h = PF.convolution(h, maps, kernel=(3, 3), pad=(1, 1), with_bias=False)
            h = PF.batch_normalization(h, batch_stat=not test)
            h = F.relu(h)
        with nn.parameter_scope("in-block-2"):
            h = PF.convolution(h, maps // 2, kernel=(3, 3), pad=(1, 1), with_bias=False)
            h = PF.batch_normalization(h, batch_stat=not test)
            h = F.relu(h)
        with nn.parameter_scope("in-block-3"):
            h = PF.convolution(h, maps, kernel=(3, 3), pad=(1, 1), with_bias=False)
            h = PF.batch_normalization(h, batch_stat=not test)

        if h.shape[1] != x.shape[1]:
            with nn.parameter_scope("skip"):
                s = PF.convolution(x, maps, kernel=(3, 3), pad=(1, 1), with_bias=False)
                s = PF.batch_normalization(s, batch_stat=not test)

    return F.relu(h + s)


def network(x, maps=16, test=False):
    h = x
    h = PF.convolution(h, maps, kernel=(3, 3), pad=(1, 1), name="first-conv", with_bias=False)
    h = PF.batch_normalization(h, batch_stat=not test, name="first-bn")
    h = F.relu(h)
    for l in range(4):  # noqa: E741 - the tutorial's own code, unchanged
        h = block(h, maps * 2 ** (l + 1), name="block-{}".format(l))
        h = F.max_pooling(h, (2, 2))
    h = F.average_pooling(h, h.shape[2:])
    pred = PF.affine(h, 100, name="pred")
    return pred


class PrintFunc(object):
    def __call__(self, nnabla_func):
        print("==========")
        print(nnabla_func.info.type_name)
        print(nnabla_func.inputs)
        print(nnabla_func.outputs)
        print(nnabla_func.info.args)


BLOCK = ["Convolution", "BatchNormalization", "ReLU"] * 2 + [
    "Convolution", "BatchNormalization", "Convolution", "BatchNormalization", "Add2", "ReLU",
    "MaxPooling"]


def test_visit_calls_the_callable_on_every_function_in_forward_order(capsys):
    x = nn.Variable.from_numpy_array(np.random.randn(*[4, 3, 128, 128]))
    pred = network(x)
    pred.visit(PrintFunc())
    blocks = capsys.readouterr().out.split("==========\n")[1:]
    names = [b.splitlines()[0] for b in blocks]
    assert names == ["Convolution", "BatchNormalization", "ReLU"] + BLOCK * 4 + [
        "AveragePooling", "Affine"]
    first = blocks[0].splitlines()
    assert first[1].startswith("[<Variable((4, 3, 128, 128), need_grad=False) at 0x")
    assert first[2].startswith("[<Variable((4, 16, 128, 128), need_grad=True) at 0x")
    assert eval(first[3]) == {"base_axis": 1, "pad": [1, 1], "stride": [1, 1],
                              "dilation": [1, 1], "group": 1, "channel_last": False}


def test_pprint_prints_the_graph_summary(capsys):
    x = nn.Variable.from_numpy_array(np.random.randn(*[4, 3, 32, 32]))
    pred = network(x)
    from nnabla.utils.inspection import pprint
    pprint(pred, summary=True, forward=True, backward=True)
    out = capsys.readouterr().out
    assert "Convolution" in out and "Affine" in out


def test_simple_graph_viewer_builds_a_graphviz_digraph_of_the_network():
    x = nn.Variable([4, 3, 128, 128])
    pred = network(x)
    import nnabla.experimental.viewers as V
    graph = V.SimpleGraph(verbose=False)
    digraph = graph.create_graphviz_digraph(pred)  # what graph.view(pred) renders
    assert "Convolution" in digraph.source and "Affine" in digraph.source


def test_graph_profiler_times_the_training_graph_and_writes_a_csv():
    from nnabla.ext_utils import get_extension_context
    device = "cpu"  # the tutorial's "cudnn"
    ctx = get_extension_context(device)
    nn.set_default_context(ctx)
    x = nn.Variable.from_numpy_array(np.random.randn(*[4, 3, 32, 32]))
    t = nn.Variable([4, 1])
    pred = network(x)
    loss = F.mean(F.softmax_cross_entropy(pred, t))
    solver = S.Momentum()
    solver.set_parameters(nn.get_parameters())
    from nnabla.utils.profiler import GraphProfiler
    B = GraphProfiler(loss, solver=solver, device_id=0, ext_name=device, n_run=2)
    B.run()
    from nnabla.utils.profiler import GraphProfilerCsvWriter
    with open("./profile.csv", "w") as f:
        writer = GraphProfilerCsvWriter(B, file=f)
        writer.write()
    assert "Convolution" in open("./profile.csv").read()


def test_nan_inf_tracer_finds_nothing_in_a_finite_network():
    x = nn.Variable.from_numpy_array(np.random.randn(*[4, 3, 64, 64]))
    pred = network(x)
    from nnabla.utils.inspection import NanInfTracer
    nit = NanInfTracer(trace_inf=True, trace_nan=True, need_details=True)
    with nit.trace():
        pred.forward(function_post_hook=nit.forward_post_hook)
        pred.backward(function_post_hook=nit.backward_post_hook)
    assert nit.check() is None
