"""nnabla_cli optimize's rewrite: Reshape/BatchMatmul/Add2 chains become Affine."""
import numpy as np

import nnabla as nn
from nnabla.utils import nnabla_pb2
from nnabla.utils.converter.nnabla.optimizer import optimize_nnp


def _matmul_add_file(path):
    """What converters from ONNX write for ``x @ w + b``: reshapes around a BatchMatmul."""
    proto = nnabla_pb2.NNablaProtoBuf()
    net = proto.network.add(name="net", batch_size=1)
    for name, kind, shape in (("x", "Buffer", (1, 8)), ("w", "Parameter", (8, 3)),
                              ("b", "Parameter", (3,)), ("xr", "Buffer", (1, 1, 8)),
                              ("wr", "Buffer", (1, 8, 3)), ("br", "Buffer", (1, 3)),
                              ("m", "Buffer", (1, 1, 3)), ("mr", "Buffer", (1, 3)),
                              ("y", "Buffer", (1, 3))):
        net.variable.add(name=name, type=kind).shape.dim.extend(shape)
    for name, kind, ins, outs, shape in (("r0", "Reshape", ["x"], ["xr"], (1, 1, 8)),
                                         ("r1", "Reshape", ["w"], ["wr"], (1, 8, 3)),
                                         ("r2", "Reshape", ["b"], ["br"], (1, 3)),
                                         ("mm", "BatchMatmul", ["xr", "wr"], ["m"], None),
                                         ("r3", "Reshape", ["m"], ["mr"], (1, 3)),
                                         ("add", "Add2", ["mr", "br"], ["y"], None)):
        f = net.function.add(name=name, type=kind)
        f.input.extend(ins)
        f.output.extend(outs)
        if shape:
            f.reshape_param.shape.dim.extend(shape)
        elif kind == "BatchMatmul":
            f.batch_matmul_param.SetInParent()
        else:
            f.add2_param.SetInParent()
    rng = np.random.RandomState(0)
    for name, shape in (("w", (8, 3)), ("b", (3,))):
        p = proto.parameter.add(variable_name=name, need_grad=True)
        p.shape.dim.extend(shape)
        p.data.extend(rng.randn(*shape).astype(np.float32).ravel().tolist())
    with open(path, "wb") as stream:
        stream.write(proto.SerializeToString())


def test_matmul_add_chain_becomes_one_affine_with_the_same_output(tmp_path):
    path = str(tmp_path / "m.protobuf")
    _matmul_add_file(path)
    g = nn.graph_def.load(path)
    x = nn.Variable.from_numpy_array(np.random.RandomState(2).randn(1, 8).astype(np.float32))
    expected = g(x)
    expected.forward()
    optimized = optimize_nnp(g)
    types = [f.type for f in optimized.forward_sequence()]
    assert types == ["Reshape", "Reshape", "Affine"]
    g.networks[optimized.name] = optimized
    y = g(x)
    y.forward()
    np.testing.assert_allclose(y.d, expected.d, rtol=1e-6)
