"""nnabla.experimental.tb_graph_writer: the event files TBGraphWriter writes, read back
record by record (TFRecord framing) and decoded with tensorboardX's protobuf classes."""
import glob
import os
import struct

import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF



def test_without_tensorboardx_the_import_error_names_the_package(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    monkeypatch.delitem(sys.modules, "nnabla.experimental.tb_graph_writer", raising=False)
    with pytest.raises(ModuleNotFoundError, match="pip install tensorboardX") as error:
        importlib.import_module("nnabla.experimental.tb_graph_writer")
    assert error.value.name == "tensorboardX"
    monkeypatch.delitem(sys.modules, "nnabla.experimental.tb_graph_writer", raising=False)


pytest.importorskip("tensorboardX", reason="TBGraphWriter needs tensorboardX (test extra)")
from nnabla.experimental.tb_graph_writer import TBGraphWriter  # noqa: E402
from tensorboardX.proto import event_pb2  # noqa: E402
from tensorboardX.proto.graph_pb2 import GraphDef  # noqa: E402


def _events(log_dir):
    events = []
    for path in glob.glob(os.path.join(log_dir, "events.out.tfevents.*")):
        with open(path, "rb") as fd:
            data = fd.read()
        pos = 0
        while pos < len(data):
            (length,) = struct.unpack("<Q", data[pos:pos + 8])
            record = data[pos + 12:pos + 12 + length]
            pos += 12 + length + 4
            event = event_pb2.Event()
            event.ParseFromString(record)
            events.append(event)
    return events


def _graph(log_dir):
    graphs = [e.graph_def for e in _events(log_dir) if e.graph_def]
    assert len(graphs) == 1
    graph = GraphDef()
    graph.ParseFromString(graphs[0])
    return {n.name: n for n in graph.node}


@pytest.fixture(autouse=True)
def clean_scope():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def test_from_variable_writes_functions_parameters_and_shapes(tmp_path):
    x = nn.Variable((2, 3, 4, 4))
    with nn.parameter_scope("c1"):
        h = PF.convolution(x, 8, (3, 3), pad=(1, 1))
        h = F.relu(PF.batch_normalization(h))
    with nn.parameter_scope("f1"):
        y = PF.affine(h, 10)
    with TBGraphWriter(log_dir=str(tmp_path)) as tb:
        tb.from_variable(y, output_name="y")
    nodes = _graph(str(tmp_path))
    ops = sorted(n.op for n in nodes.values() if n.op != "Variable")
    assert ops == ["Affine", "BatchNormalization", "Convolution", "ReLU"]
    conv = nodes["c1/conv/Convolution"]
    assert list(conv.input) == ["Input", "c1/conv/W", "c1/conv/b"]
    assert b"pad=(1, 1)" in conv.attr["parameters"].s or b"pad=[1, 1]" in \
        conv.attr["parameters"].s
    assert [d.size for d in nodes["c1/conv/W"].attr["shape"].shape.dim] == [8, 3, 3, 3]
    assert [d.size for d in nodes["y"].attr["shape"].shape.dim] == [2, 10]
    assert list(nodes["y"].input) == ["f1/affine/Affine"]
    assert list(nodes["f1/affine/Affine"].input)[1:] == ["f1/affine/W", "f1/affine/b"]
    # a function is in its first parameter's scope; the ReLU has none, so no scope; its
    # input is the batch normalization's output
    assert list(nodes["ReLU"].input) == ["c1/bn/BatchNormalization/output"]


def test_repeated_functions_get_unique_names(tmp_path):
    x = nn.Variable((2, 3))
    y = F.relu(F.relu(x) + F.relu(x))
    with TBGraphWriter(log_dir=str(tmp_path)) as tb:
        tb.from_variable(y)
    nodes = _graph(str(tmp_path))
    assert {"ReLU", "ReLU_1", "ReLU_2", "Add2", "output", "Input"} <= set(nodes)
    assert len([n for n in nodes.values() if n.op == "ReLU"]) == 3


def test_scalars_and_histograms(tmp_path):
    with TBGraphWriter(log_dir=str(tmp_path)) as tb:
        for i in range(5):
            tb.add_scalar("curve/sin", np.sin(i), i)
        tb.add_histogram("hist", np.arange(10.0), 0)
    values = [(e.step, v.tag, v.simple_value) for e in _events(str(tmp_path))
              for v in e.summary.value if v.tag == "curve/sin"]
    assert [s for s, _, _ in values] == list(range(5))
    np.testing.assert_allclose([v for _, _, v in values], np.sin(np.arange(5)), rtol=1e-6)
    hist = [v.histo for e in _events(str(tmp_path)) for v in e.summary.value
            if v.tag == "hist"]
    assert hist[0].num == 10 and hist[0].sum == 45


def test_from_graph_def(tmp_path):
    x = nn.Variable((2, 3))
    y = PF.affine(x, 4, name="fc")
    graph = nn.graph_def.create_graph_from_variable("net", y)
    with TBGraphWriter(log_dir=str(tmp_path)) as tb:
        tb.from_graph_def(graph)
    nodes = _graph(str(tmp_path))
    fname = [k for k, n in nodes.items() if n.op == "Affine"][0]
    assert list(nodes[fname].input)[1:] == ["fc/affine/W", "fc/affine/b"]
    out = [k for k, n in nodes.items() if list(n.input) == [fname]]
    assert len(out) == 1 and [d.size for d in nodes[out[0]].attr["shape"].shape.dim] == [2, 4]
