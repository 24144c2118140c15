"""Models recorded with ``nn.graph_def`` here and on nnabla 1.39 (same code on both).

Each builder returns the ProtoGraph it recorded; ``tools/record_converter_graph_def.py``
stores what nnabla writes for them.
"""
import numpy as np

import nnabla as nn
import nnabla.functions as F
import nnabla.parametric_functions as PF
from nnabla.core.modules import ResUnit


def mlp():
    with nn.graph_def.graph(name="mlp") as g:
        x = nn.ProtoVariable((4, 6), name="x")
        h = F.tanh(PF.affine(x, 5, name="fc1"))
        F.softmax(PF.affine(h, 3, name="fc2"))
    return g


def cnn_flat():
    with nn.graph_def.graph() as g:
        x = nn.ProtoVariable((2, 3, 8, 8))
        h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="c1")
        h = F.relu(PF.batch_normalization(h, name="bn1"))
        h = F.max_pooling(h, (2, 2))
        h = F.reshape(h, (2, -1))
        PF.affine(h, 10, name="fc")
    return g


def res_unit():
    unit = ResUnit(8)
    with nn.graph_def.graph() as g:
        unit(nn.ProtoVariable((2, 4, 6, 6)))
    g.module_keepalive = unit
    return g


def from_variable():
    x = nn.Variable((3, 5))
    h = F.sigmoid(PF.affine(x, 4, name="a"))
    y = F.add_scalar(h * 2.0, 1.0)
    return nn.graph_def.create_graph_from_variable("fv", y, names={"x": x, "y": y})


def broadcast_base_axis_2():
    with nn.graph_def.graph() as g:
        x = nn.ProtoVariable((1, 2, 3, 2, 2))
        h = PF.convolution(x, 3, (2, 2), name="c1", base_axis=2)
        F.broadcast(h, shape=(1, 2, 3, 3, 3))
    return g


MODELS = {"mlp": mlp, "cnn_flat": cnn_flat, "res_unit": res_unit,
          "from_variable": from_variable, "broadcast_base_axis_2": broadcast_base_axis_2}


def random_inputs(network, batch_size=None, seed=0):
    """numpy inputs for ``network`` (a ProtoNetwork), a leading -1 set to ``batch_size``."""
    rng = np.random.RandomState(seed)
    shapes = [tuple(d if d > 0 else batch_size for d in network.variables[k].shape)
              for k in network.inputs]
    return [rng.randn(*s).astype(np.float32) for s in shapes]
