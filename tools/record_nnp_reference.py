"""Record NNP files written by nnabla 1.39, with an input and nnabla's output, for the tests.

Run with an interpreter that has nnabla 1.39 installed (never this project's package):

    $NNABLA_REFERENCE_PYTHON tools/record_nnp_reference.py tests/data/nnp

For each model (an MLP, a CNN with batch normalization, an LSTM, a ResNet-like network with
repeated blocks) it writes ``<model>.nnp``, ``<model>.nntxt`` (parameters included) and
``<model>.protobuf`` (parameters included), plus ``<model>_io.npz`` holding the input ``x``
and nnabla's output ``y`` (at batch size 2; ``y_b3`` at batch size 3 where the network
has a variable batch size).

With ``--check DIR`` instead, it loads the files our package wrote into DIR
(``<model><ext>`` plus ``<model>_io.npz``) with nnabla and prints, per file, the largest
absolute difference between nnabla's output and the recorded one as JSON.
"""
import json
import os
import sys

import numpy as np


def _models():
    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF

    def mlp(batch):
        x = nn.Variable((batch, 6))
        h = F.tanh(PF.affine(x, 8, name="fc1"))
        return x, PF.affine(h, 3, name="fc2")

    def cnn_bn(batch):
        x = nn.Variable((batch, 2, 8, 8))
        h = PF.convolution(x, 4, (3, 3), pad=(1, 1), name="conv1")
        h = F.relu(PF.batch_normalization(h, batch_stat=False, name="bn1"))
        h = F.max_pooling(h, (2, 2))
        return x, PF.affine(h, 5, name="fc")

    def lstm(batch):
        x = nn.Variable((5, batch, 3))
        h = nn.Variable.from_numpy_array(np.zeros((1, 1, batch, 6), np.float32))
        c = nn.Variable.from_numpy_array(np.zeros((1, 1, batch, 6), np.float32))
        y, _, _ = PF.lstm(x, h, c, name="lstm")
        return x, F.sum(y, axis=0)

    def resnet(batch):
        x = nn.Variable((batch, 3, 8, 8))
        h = F.relu(PF.convolution(x, 4, (3, 3), pad=(1, 1), name="stem"))
        for i in range(2):
            r = PF.convolution(h, 4, (3, 3), pad=(1, 1), name=f"block{i}/conv1")
            r = F.relu(PF.batch_normalization(r, batch_stat=False, name=f"block{i}/bn1"))
            r = PF.convolution(r, 4, (3, 3), pad=(1, 1), name=f"block{i}/conv2")
            h = F.relu(h + r)
        return x, PF.affine(F.global_average_pooling(h), 10, name="head")

    return {"mlp": (mlp, True), "cnn_bn": (cnn_bn, True), "lstm": (lstm, False),
            "resnet": (resnet, True)}


def record(folder):
    import nnabla as nn
    from nnabla.utils.save import save

    os.makedirs(folder, exist_ok=True)
    for name, (build, variable_batch) in _models().items():
        nn.clear_parameters()
        rng = np.random.RandomState(7)
        x, y = build(2)
        for p in nn.get_parameters(grad_only=False).values():
            p.d = rng.randn(*p.shape).astype(np.float32) * 0.3
            if p.name.endswith("var") or "/var" in p.name:
                p.d = np.abs(p.d) + 0.5
        x.d = rng.randn(*x.shape).astype(np.float32)
        y.forward()
        arrays = {"x": x.d.copy(), "y": y.d.copy()}
        contents = {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
                                  "names": {"x": x}}],
                    "executors": [{"name": "runtime", "network": "net", "data": ["x"],
                                   "output": ["y"]}]}
        for ext in (".nnp", ".nntxt", ".protobuf"):
            save(os.path.join(folder, name + ext), contents, include_params=True,
                 variable_batch_size=variable_batch)
        if variable_batch:
            x3, y3 = build(3)
            x3.d = rng.randn(*x3.shape).astype(np.float32)
            y3.forward()
            arrays.update(x_b3=x3.d.copy(), y_b3=y3.d.copy())
        np.savez(os.path.join(folder, f"{name}_io.npz"), **arrays)


def check(folder):
    import nnabla as nn
    from nnabla.utils.nnp_graph import NnpLoader

    results = {}
    for entry in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(entry)
        if ext not in (".nnp", ".nntxt", ".protobuf"):
            continue
        io_arrays = np.load(os.path.join(folder, f"{stem}_io.npz"))
        nn.clear_parameters()
        net = NnpLoader(os.path.join(folder, entry)).get_network(
            "net", batch_size=io_arrays["x"].shape[0 if stem != "lstm" else 1])
        net.inputs["x"].d = io_arrays["x"]
        y = net.outputs["y"]
        y.forward()
        results[entry] = float(np.abs(y.d - io_arrays["y"]).max())
    print(json.dumps(results))


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check(sys.argv[2])
    else:
        record(sys.argv[1])
