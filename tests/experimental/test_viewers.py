"""Tests of nnabla.experimental.viewers.SimpleGraph."""
import shutil

import pytest

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF

graphviz = pytest.importorskip("graphviz", reason="SimpleGraph needs the graphviz package "
                                                  "(pip install graphviz)")
from nnabla.experimental.viewers import SimpleGraph  # noqa: E402


@pytest.fixture
def net():
    nn.clear_parameters()
    x = nn.Variable((2, 3, 4, 4))
    with nn.parameter_scope("c1"):
        h = F.relu(PF.batch_normalization(PF.convolution(x, 8, (3, 3), pad=(1, 1))))
    with nn.parameter_scope("f1"):
        y = PF.affine(h, 10)
    yield y
    nn.clear_parameters()


def test_digraph_has_each_function_and_parameters_named_in_their_scope(net):
    g = SimpleGraph().create_graphviz_digraph(net)
    assert isinstance(g, graphviz.Digraph)
    source = g.source
    for name in ["Convolution-1", "BatchNormalization-1", "ReLU-1", "Affine-1"]:
        assert f'"{name}" [label=' in source
    assert 'label="Convolution\nc1/conv"' in source and "[label=W color=black" in source
    assert "color=blue" in source and "color=green" in source   # colour by function type


def test_verbose_labels_show_shapes_and_arguments(net):
    source = SimpleGraph(verbose=True).create_graphviz_digraph(net, params={}).source
    assert "(2, 3, 4, 4), need_grad=False" in source and '\\"base_axis\\": 1' in source


def test_function_colour_map_is_keyed_by_function_name(net):
    source = SimpleGraph(fname_color_map={"Affine": "yellow"}).create_graphviz_digraph(
        net).source
    assert "color=yellow" in source and "color=lightgray" in source


def test_save_writes_the_dot_source_with_a_warning_when_dot_is_missing(net, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))   # no dot program on the path
    with pytest.warns(RuntimeWarning, match="dot"):
        written = SimpleGraph().save(net, str(tmp_path / "graph"))
    assert written == str(tmp_path / "graph")
    assert (tmp_path / "graph").read_text().startswith("digraph")


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="rendering needs Graphviz's dot program (apt-get install graphviz)")
def test_save_renders_png_with_dot(net, tmp_path):
    written = SimpleGraph().save(net, str(tmp_path / "graph"), format="png")
    assert open(written, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
