"""nnabla.core.graph_optimizer: renaming variables and removing Identity functions of a
proto network, checked by running the edited network against numpy."""
import numpy as np
import pytest

import nnabla as nn
import nnabla.functions as F
from nnabla.core.graph_optimizer import IdentityRemover, remove_function, rename_variable


def _two_headed():
    x = nn.Variable((2, 3))
    h = F.tanh(x)
    y0, y1 = F.relu(h), F.sigmoid(h)
    g = nn.graph_def.create_graph_from_variable("net", [y0, y1],
                                                names={"x": x, "y0": y0, "y1": y1})
    net = g.networks["net"]
    net.graph_ = g          # the network refers to its graph weakly: keep it alive
    return net


def test_rename_variable_renames_every_reference_and_the_network_still_runs():
    net = _two_headed()
    rename_variable(net, {"y0": "relu", "y1": "sig", "x": "input"})
    assert net.outputs == ["relu", "sig"] and net.inputs == ["input"]
    assert all(net.variables[n].name == n for n in ("relu", "sig", "input"))
    assert not {"x", "y0", "y1"} & set(net.variables)
    f_relu = net.functions[net.variables["relu"].parent]
    assert f_relu.outputs == ["relu"]
    assert all(net.functions[f].inputs == ["input"] for f in net.variables["input"].required)
    xv = np.random.RandomState(0).randn(2, 3).astype(np.float32)
    net.variables["input"].variable_instance = None
    relu, sig = net()
    x = net.variables["input"].variable_instance
    x.d = xv
    F.sink(relu, sig).forward()
    np.testing.assert_allclose(relu.d, np.maximum(np.tanh(xv), 0), rtol=1e-6)
    np.testing.assert_allclose(sig.d, 1 / (1 + np.exp(-np.tanh(xv))), rtol=1e-6)


def test_rename_variable_swaps_names():
    net = _two_headed()
    rename_variable(net, {"y0": "y1", "y1": "y0"})
    assert net.outputs == ["y1", "y0"]
    assert net.functions[net.variables["y1"].parent].type == "ReLU"


@pytest.mark.parametrize("renames, error, fragment", [
    ({"nope": "a"}, ValueError, "variable 'nope' is not in network 'net'"),
    ({"y0": "y1"}, ValueError, "the new name 'y1' of 'y0' is already a variable"),
    ({"y0": "a", "x": "a"}, ValueError, "maps two variables to one name"),
    (["y0", "a"], TypeError, "argument 'renames'"),
])
def test_rename_variable_bad_input_raises_and_changes_nothing(renames, error, fragment):
    net = _two_headed()
    before = (list(net.variables), list(net.outputs), list(net.inputs))
    with pytest.raises(error, match=fragment):
        rename_variable(net, renames)
    assert (list(net.variables), list(net.outputs), list(net.inputs)) == before


def test_identity_remover_joins_inputs_and_outputs_and_values_are_kept():
    x = nn.Variable((2, 3))
    b = F.identity(F.sigmoid(F.identity(F.relu(x))))
    g = nn.graph_def.create_graph_from_variable("n", b, names={"x": x})
    net = g.networks["n"]
    out_name = net.outputs[0]
    renamed = {}
    remover = IdentityRemover(renamed)
    for f in list(net.functions.values()):
        remover(f)
    assert [f.type for f in net.functions.values()] == ["ReLU", "Sigmoid"]
    assert net.outputs == [out_name]            # the network's output keeps its name
    assert len(renamed) == 2 and out_name in renamed.values()
    relu = next(f for f in net.functions.values() if f.type == "ReLU")
    sigmoid = next(f for f in net.functions.values() if f.type == "Sigmoid")
    assert sigmoid.inputs == relu.outputs and sigmoid.outputs == [out_name]
    y = net()
    xv = np.random.RandomState(1).randn(2, 3).astype(np.float32)
    net.variables["x"].variable_instance.d = xv
    y.forward()
    np.testing.assert_allclose(y.d, 1 / (1 + np.exp(-np.maximum(xv, 0))), rtol=1e-6)


def test_identity_remover_keeps_what_is_required_and_other_types():
    x = nn.Variable((2, 3))
    y = F.identity(F.relu(x))
    net = nn.graph_def.create_graph_from_variable("n", y, names={"x": x}).networks["n"]
    IdentityRemover(is_required=lambda pf: False)(net.functions[net.variables[
        net.outputs[0]].parent])
    relu = next(f for f in net.functions.values() if f.type == "ReLU")
    IdentityRemover()(relu)
    assert [f.type for f in net.functions.values()] == ["ReLU", "Identity"]
    with pytest.raises(ValueError, match="remove_function: function .* has 1 inputs and 1 "
                       "outputs|expected one of each") as info:
        remove_function(_concat_function(), {})
    assert "expected one of each" in str(info.value)


def _concat_function():
    a, b = nn.Variable((2,)), nn.Variable((2,))
    y = F.concatenate(a, b)
    net = nn.graph_def.create_graph_from_variable("c", y, names={"a": a, "b": b}).networks["c"]
    return next(iter(net.functions.values()))
