"""Neural Network Console loop control (repeat_info, RepeatStart/RepeatEnd,
RecurrentInput/RecurrentOutput, Delay): networks load unrolled and compute what a numpy
reference of the same loops computes."""
import numpy as np
import pytest
from google.protobuf import text_format

import nnabla as nn
from nnabla.utils import nnabla_pb2
from nnabla.utils._nnp_functions import NnpFormatError
from nnabla.utils._nnp_loop import expand_loop_control
from nnabla.utils.load import load

B, T, D, H = 2, 3, 4, 5

# h_t = tanh(x_t W + h_{t-1} U), h_{-1} = h0; y stacks h_t along axis 1.
RNN = f"""
network {{
  name: "rnn" batch_size: {B}
  repeat_info {{ id: "T" times: {T} }}
  variable {{ name: "x" type: "Buffer" shape {{ dim: -1 dim: {T} dim: {D} }} }}
  variable {{ name: "h0" type: "Buffer" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "xt" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "hprev" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "a" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "b" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "s" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "h" type: "Buffer" repeat_id: "T" shape {{ dim: -1 dim: {H} }} }}
  variable {{ name: "y" type: "Buffer" shape {{ dim: -1 dim: {T} dim: {H} }} }}
  variable {{ name: "W" type: "Parameter" shape {{ dim: {D} dim: {H} }} }}
  variable {{ name: "U" type: "Parameter" shape {{ dim: {H} dim: {H} }} }}
  function {{ name: "in" type: "RecurrentInput" repeat_id: "T" input: "x" output: "xt"
             recurrent_param {{ repeat_id: "T" length: {T} axis: 1 }} }}
  function {{ name: "delay" type: "Delay" repeat_id: "T" input: "h" input: "h0"
             output: "hprev" recurrent_param {{ repeat_id: "T" length: {T} axis: 1 }} }}
  function {{ name: "fx" type: "Affine" repeat_id: "T" input: "xt" input: "W" output: "a"
             affine_param {{ base_axis: 1 }} }}
  function {{ name: "fh" type: "Affine" repeat_id: "T" input: "hprev" input: "U" output: "b"
             affine_param {{ base_axis: 1 }} }}
  function {{ name: "add" type: "Add2" repeat_id: "T" input: "a" input: "b" output: "s" }}
  function {{ name: "act" type: "Tanh" repeat_id: "T" input: "s" output: "h" }}
  function {{ name: "out" type: "RecurrentOutput" input: "h" output: "y"
             recurrent_param {{ repeat_id: "T" length: {T} axis: 1 }} }}
}}
"""

# z_{r} = tanh(z_{r-1} W_r + b_r) for r = 0, 1, 2, z_{-1} = x: a block repeated 3 times,
# its weight named with {R} (fc[r]/W) and its bias without (b_R[r]).
REPEAT = f"""
network {{
  name: "repeat" batch_size: {B}
  repeat_info {{ id: "R" times: 3 }}
  variable {{ name: "x" type: "Buffer" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "s" type: "Buffer" repeat_id: "R" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "a" type: "Buffer" repeat_id: "R" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "z" type: "Buffer" repeat_id: "R" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "y" type: "Buffer" shape {{ dim: -1 dim: {D} }} }}
  variable {{ name: "fc{{R}}/W" type: "Parameter" repeat_id: "R" shape {{ dim: {D} dim: {D} }} }}
  variable {{ name: "b" type: "Parameter" repeat_id: "R" shape {{ dim: {D} }} }}
  function {{ name: "start" type: "RepeatStart" repeat_id: "R" input: "x" input: "z"
             output: "s" repeat_param {{ repeat_id: "R" times: 3 }} }}
  function {{ name: "fc" type: "Affine" repeat_id: "R" input: "s" input: "fc{{R}}/W"
             input: "b" output: "a" affine_param {{ base_axis: 1 }} }}
  function {{ name: "act" type: "Tanh" repeat_id: "R" input: "a" output: "z" }}
  function {{ name: "end" type: "RepeatEnd" input: "z" output: "y"
             repeat_param {{ repeat_id: "R" times: 3 }} }}
}}
"""


@pytest.fixture(autouse=True)
def _clean_parameters():
    nn.clear_parameters()
    yield
    nn.clear_parameters()


def _write(tmp_path, text, parameters):
    proto = text_format.Parse(text, nnabla_pb2.NNablaProtoBuf())
    for name, value in parameters.items():
        p = proto.parameter.add(variable_name=name, need_grad=True)
        p.shape.dim.extend(value.shape)
        p.data.extend(value.ravel().tolist())
    path = tmp_path / "model.nntxt"
    path.write_text(text_format.MessageToString(proto))
    return str(path)


def _values(rng, names_and_shapes):
    return {n: rng.randn(*s).astype(np.float32) for n, s in names_and_shapes}


def test_a_recurrent_network_unrolls_over_time_as_a_numpy_loop(tmp_path):
    rng = np.random.RandomState(0)
    params = _values(rng, [("W", (D, H)), ("U", (H, H))])
    info = load(_write(tmp_path, RNN, params))
    net = info.networks["rnn"]
    x, h0 = rng.randn(B, T, D), rng.randn(B, H)
    net.variables["x"].variable_instance.d = x
    net.variables["h0"].variable_instance.d = h0
    y = net.variables["y"].variable_instance
    y.forward()
    h, expected = h0, []
    for t in range(T):
        h = np.tanh(x[:, t] @ params["W"] + h @ params["U"])
        expected.append(h)
    np.testing.assert_allclose(y.d, np.stack(expected, axis=1), rtol=1e-5, atol=1e-6)


def test_a_repeated_block_runs_its_times_with_one_parameter_set_each(tmp_path):
    rng = np.random.RandomState(1)
    params = _values(rng, [(f"fc[{r}]/W", (D, D)) for r in range(3)]
                     + [(f"b_R[{r}]", (D,)) for r in range(3)])
    info = load(_write(tmp_path, REPEAT, params), batch_size=3)
    net = info.networks["repeat"]
    x = rng.randn(3, D)
    net.variables["x"].variable_instance.d = x
    y = net.variables["y"].variable_instance
    y.forward()
    z = x
    for r in range(3):
        z = np.tanh(z @ params[f"fc[{r}]/W"] + params[f"b_R[{r}]"])
    np.testing.assert_allclose(y.d, z, rtol=1e-5, atol=1e-6)
    assert sorted(net.parameters) == sorted(params)


def test_gradients_flow_through_the_unrolled_loop(tmp_path):
    rng = np.random.RandomState(2)
    params = _values(rng, [("W", (D, H)), ("U", (H, H))])
    net = load(_write(tmp_path, RNN, params)).networks["rnn"]
    x = net.variables["x"].variable_instance
    x.d, x.need_grad = rng.randn(B, T, D), True
    net.variables["h0"].variable_instance.d = 0
    y = net.variables["y"].variable_instance
    y.forward()
    x.grad.zero()
    y.backward(np.ones(y.shape))
    # the last step's input reaches y only through h_{T-1} = tanh(x_{T-1} W + ...)
    last = 1 - y.d[:, T - 1] ** 2
    np.testing.assert_allclose(x.g[:, T - 1], last @ params["W"].T, rtol=1e-4, atol=1e-5)


def test_graph_def_expands_loop_control_and_builds_the_same_network(tmp_path):
    rng = np.random.RandomState(3)
    params = _values(rng, [("W", (D, H)), ("U", (H, H))])
    path = _write(tmp_path, RNN, params)
    g = nn.graph_def.load(path)
    assert g.networks["rnn"].repeat_info == {"T": T}
    g.expand_loop_control()
    network = g.networks["rnn"]
    assert "xt_T[2]" in network.variables and "W" in network.parameters
    types = []
    network.execute_on_proto(lambda pf: types.append(pf.type))
    assert types.count("Split") == 1 and types.count("Stack") == 1
    assert types.count("Identity") == T     # the Delay of each step
    x, h0 = nn.Variable.from_numpy_array(rng.randn(B, T, D)), nn.Variable((B, H))
    h0.d = 0
    y = network(x, h0)
    y.forward()
    h = np.zeros((B, H))
    for t in range(T):
        h = np.tanh(x.d[:, t] @ params["W"] + h @ params["U"])
    np.testing.assert_allclose(y.d[:, -1], h, rtol=1e-5, atol=1e-6)


def test_execute_on_proto_visits_functions_after_their_inputs(tmp_path):
    rng = np.random.RandomState(4)
    params = _values(rng, [("W", (D, H)), ("U", (H, H))])
    net = load(_write(tmp_path, RNN, params)).networks["rnn"]
    seen, written = [], set(net.inputs) | set(net.parameters)

    def visit(f):
        assert all(name in written for name in f.inputs), f.name
        written.update(f.outputs)
        seen.append(f.name)

    net.execute_on_proto(visit)
    assert len(seen) == len(net.functions) and "y" in written


def test_an_undefined_repeat_id_is_named():
    network = text_format.Parse(REPEAT, nnabla_pb2.NNablaProtoBuf()).network[0]
    del network.repeat_info[:]
    with pytest.raises(NnpFormatError, match="repeat id 'R'"):
        expand_loop_control(network)


def test_expansion_leaves_the_message_unchanged():
    network = text_format.Parse(REPEAT, nnabla_pb2.NNablaProtoBuf()).network[0]
    before = network.SerializeToString()
    expanded = expand_loop_control(network)
    assert network.SerializeToString() == before
    assert not len(expanded.repeat_info)
    assert [f.name for f in expanded.function][:3] == [
        "$EC$/start_R[0]", "$EC$/start_R[1]", "$EC$/start_R[2]"]


def test_module_example_runs():
    import doctest

    import nnabla.utils._nnp_loop as module

    assert doctest.testmod(module).failed == 0
