"""Record the networks nnabla 1.39's ``nn.graph_def`` writes for a few recorded models.

Run with an interpreter that has nnabla 1.39 (``NNABLA_REFERENCE_PYTHON``)::

    $NNABLA_REFERENCE_PYTHON tools/record_converter_graph_def.py tests/data/converter/graph_def

For each model of ``tests/graph_def/graph_def_models.py`` it writes ``<model>.nntxt``: the
``NNablaProtoBuf`` text of ``g.as_proto()`` (networks only, variable batch size on), which
``tests/graph_def/test_graph_def.py`` compares with ours.

``--check FOLDER`` instead loads every ``<name>.<ext>`` of FOLDER with ``nn.graph_def.load``,
feeds ``x`` of ``<name>_io.npz`` to the default network and prints (last line, JSON) the
largest difference to its ``y`` per file.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "graph_def"))


def main(folder):
    import nnabla as nn
    from google.protobuf import text_format

    import graph_def_models as models

    os.makedirs(folder, exist_ok=True)
    for name, build in models.MODELS.items():
        nn.clear_parameters()
        nn.graph_def.reset_default_graph()
        g = build()
        text = text_format.MessageToString(g.as_proto())
        path = os.path.join(folder, f"{name}.nntxt")
        with open(path + ".tmp", "w") as stream:
            stream.write(text)
        os.replace(path + ".tmp", path)
        print("wrote", path)


def check(folder):
    import glob
    import json

    import numpy as np

    import nnabla as nn

    differences = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.*"))):
        name, ext = os.path.splitext(os.path.basename(path))
        if ext == ".npz":
            continue
        io = np.load(os.path.join(folder, f"{name}_io.npz"))
        nn.clear_parameters()
        g = nn.graph_def.load(path, batch_size=io["x"].shape[0])
        y = g()
        network = g.default_graph()
        network.variables[network.inputs[0]].variable_instance.d = io["x"]
        y.forward()
        differences[f"{name}{ext}"] = float(np.abs(y.d - io["y"]).max())
    print(json.dumps(differences))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data",
                                                             "converter", "graph_def"))
